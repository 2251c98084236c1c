"""shared.frozen.fast_init: the same constructor as the dataclass's own, still frozen."""

import inspect
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from typing import Any

import pytest

from consumer import records
from consumer.decode import Event
from consumer.extract.runs import Parent, Placement
from shared.frozen import fast_init

pytestmark = pytest.mark.unit


def _is_fast(cls: type) -> bool:
    code = getattr(vars(cls).get("__init__"), "__code__", None)
    return code is not None and code.co_filename.startswith("<fast_init ")


FAST = [cls for cls in vars(records).values() if isinstance(cls, type) and _is_fast(cls)]
FAST += [Event, Parent, Placement]


def test_every_frozen_record_class_is_fast() -> None:
    frozen = [
        cls
        for cls in vars(records).values()
        if isinstance(cls, type)
        and cls.__module__ == records.__name__
        and getattr(getattr(cls, "__dataclass_params__", None), "frozen", False)
    ]
    assert frozen, "no record classes found"
    assert set(frozen) <= set(FAST)


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_same_signature_as_the_fields(cls: type) -> None:
    params = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in params] == [f.name for f in fields(cls)]
    for param, f in zip(params, fields(cls), strict=True):
        expected = inspect.Parameter.empty if f.default is MISSING else f.default
        assert param.default == expected
        assert param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_fields_set_by_position_and_keyword_and_still_frozen(cls: type) -> None:
    values = {f.name: object() for f in fields(cls)}
    by_position = cls(*values.values())
    by_keyword = cls(**values)
    for name, value in values.items():
        assert getattr(by_position, name) is value
        assert getattr(by_keyword, name) is value
    required = [f.name for f in fields(cls) if f.default is MISSING]
    only_required = cls(**{name: values[name] for name in required})
    for f in fields(cls):
        if f.default is not MISSING:
            assert getattr(only_required, f.name) == f.default
    with pytest.raises(FrozenInstanceError):
        setattr(by_position, fields(cls)[0].name, None)
    if required:
        with pytest.raises(TypeError, match="missing"):
            cls()
    with pytest.raises(TypeError, match="unexpected keyword"):
        cls(**values, not_a_field=1)


def test_equal_to_the_stock_dataclass() -> None:
    @dataclass(frozen=True, slots=True)
    class Stock:
        a: int
        b: str = "b"
        c: Any = None

    @fast_init
    @dataclass(frozen=True, slots=True)
    class Fast:
        a: int
        b: str = "b"
        c: Any = None

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, "x"), {}),
        ((1,), {"c": 3}),
        ((), {"a": 2, "b": "y"}),
    ]
    for args, kwargs in calls:
        stock, fast = Stock(*args, **kwargs), Fast(*args, **kwargs)
        assert repr(stock).replace("Stock", "Fast") == repr(fast)
        assert hash(stock) == hash(fast)
    assert Fast(1) == Fast(1)
    assert Fast(1) != Fast(2)


def test_refuses_what_it_does_not_support() -> None:
    @dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclass(frozen=True)
    class NotSlotted:
        a: int

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            """Any __post_init__ is refused, whatever it does."""

    @dataclass(frozen=True, slots=True)
    class Empty:
        """No fields: nothing for the fast __init__ to set."""

    for cls in (NotFrozen, NotSlotted, Factory, PostInit, Empty):
        with pytest.raises(TypeError):
            fast_init(cls)
