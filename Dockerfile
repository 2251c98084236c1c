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
RUN uv pip install --system --no-cache --no-deps .
USER nobody
