# The native decode + extract (native/, Rust; consumer/native.py): a wheel for CPython 3.11.
FROM rust:1-slim-bookworm AS native
RUN apt-get update && apt-get install -y --no-install-recommends python3-dev python3-pip \
 && pip install --break-system-packages --no-cache-dir "maturin>=1.7,<2"
WORKDIR /native
COPY native ./
RUN maturin build --release --interpreter python3.11 --out /wheels

# One image for the migrate job, the consumer and the server (see docker-compose.yml).
FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir uv==0.13.8 \
 && uv pip install --system --no-cache -r requirements.lock
COPY shared ./shared
COPY consumer ./consumer
COPY server ./server
COPY migrations ./migrations
COPY --from=native /wheels /wheels
RUN uv pip install --system --no-cache --no-deps . /wheels/*.whl
USER nobody
