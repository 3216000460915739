"""Frozen pydantic models built from values that are valid already, without validating them again.

Validation is most of what building an event costs, and the hot paths build models from values
that were checked on their way in or that the caller made itself: the stored-event codec
(:mod:`agentdeck.storage.codec`) reads rows an event's own serializer wrote, the payload builders
(:mod:`agentdeck.model.trusted`) assemble ``run.started`` and ``run.completed`` from the runtime's
own parts, and :meth:`~agentdeck.model.events.Event.record` (with the memory store, through
:func:`~agentdeck.model.events.record_unchecked`) wraps a payload model in its store's envelope.
This module is the one place that knows how to do that -- pydantic keeps an instance's state in
four slots (``__dict__``, ``__pydantic_fields_set__``, ``__pydantic_extra__``,
``__pydantic_private__``), which a :func:`builder` fills directly -- and when it is safe.

**When a model may be built this way** (:func:`unsafe_because` says why not):

* it is frozen: every model one builder makes shares one fields set (a set per model was a third
  of a stored event's memory), and only assigning a field changes a fields set -- which a frozen
  model refuses; ``model_copy`` copies the set before it updates it;
* it has no validators (field, model, root) and no ``model_post_init``, since building directly
  runs none of them -- unless the caller *vouches* for a validator by name, because it has
  established what that validator ensures (``Event.record`` checks the payload's kind and the
  schema version itself);
* it has no private attributes and does not keep extra fields (``extra="allow"``): their state
  would live in the slots a builder leaves empty;
* no field has an alias: values are keyed by field name, as the model stores them.

**What the caller promises**: ``values`` holds every field, in declaration order (what ``repr``
and iteration show), each exactly what validation would store -- of its exact type and already
normalized (a UTC time, an enum member rather than its string, a nested model instance, JSON data
in its JSON form); and the builder's ``fields_set`` names the fields validation would mark as
given. Anything else must take the validated constructor: a builder checks no value.

:func:`indistinguishable` is what "the same model" means here, and :func:`proven` is how a
shortcut checks itself once on samples, so that a pydantic release that changed its internals
turns the shortcut off (its owner validates instead) rather than building something different.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Set
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = [
    "UnsafeModelError",
    "builder",
    "indistinguishable",
    "proven",
    "sharing_fields_set",
    "unsafe_because",
]

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V")


class UnsafeModelError(TypeError):
    """A builder asked for a model that cannot safely be built without validation.

    A programming error in AgentDeck's own code (every model built this way is one of its own,
    and its builders are made at import), never something a caller's input causes; the message
    names the model and every reason.
    """


def _slot_setter(name: str) -> Callable[[object, object], None]:
    """The setter of the instance slot ``name`` that :class:`pydantic.BaseModel` declares.

    Calling the slot's own descriptor skips the attribute lookup ``object.__setattr__`` makes on
    every call, and a frozen model's ``__setattr__``, which refuses: a model sets four.
    """
    descriptor = vars(BaseModel).get(name)
    setter = getattr(descriptor, "__set__", None)
    if setter is None:  # pragma: no cover - pydantic 2 declares all four as slots
        return lambda model, value: object.__setattr__(model, name, value)
    return setter  # type: ignore[no-any-return]


_set_dict = _slot_setter("__dict__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")
_new = object.__new__


def unsafe_because(cls: type[BaseModel], *, vouched: Collection[str] = ()) -> list[str]:
    """Why ``cls`` cannot be built without validation (see the module's rules); empty if it can.

    ``vouched`` names validators whose guarantees the caller establishes itself; a name that is
    not one of the model's validators is a reason too (the vouching is out of date).
    """
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return [f"{cls!r} is not a pydantic model"]
    reasons: list[str] = []
    config = cls.model_config
    if not config.get("frozen"):
        reasons.append("it is not frozen (its builder shares one fields set between models)")
    if config.get("extra") not in (None, "ignore"):
        reasons.append(f"it keeps extra fields (extra={config.get('extra')!r})")
    if cls.__private_attributes__:
        reasons.append(
            f"it has private attributes ({', '.join(sorted(cls.__private_attributes__))})"
        )
    if getattr(cls, "__pydantic_post_init__", None) is not None:
        reasons.append("it has a model_post_init, which building directly would not run")
    decorators = cls.__pydantic_decorators__
    validators = {
        name
        for kind in (
            decorators.validators,
            decorators.field_validators,
            decorators.root_validators,
            decorators.model_validators,
        )
        for name in kind
    }
    if unvouched := sorted(validators - set(vouched)):
        reasons.append(f"its validators {', '.join(unvouched)} would not run")
    if stale := sorted(set(vouched) - validators):
        reasons.append(f"{', '.join(stale)} is vouched for but is none of its validators")
    aliased = sorted(
        name
        for name, info in cls.model_fields.items()
        if info.alias is not None or info.validation_alias is not None
    )
    if aliased:
        reasons.append(f"its fields {', '.join(aliased)} have aliases")
    return reasons


def builder(
    cls: type[M],
    *,
    fields_set: Set[str] | None = None,
    vouched: Collection[str] = (),
) -> Callable[[dict[str, Any]], M]:
    """A function building a ``cls`` from a dict of its field values, without validating them.

    The dict becomes the model's own ``__dict__`` (not copied), so it must not be used again.
    Every model built shares one ``fields_set`` (default: every field). Raises
    :class:`UnsafeModelError` when ``cls`` cannot be built this way or ``fields_set`` names a
    field it does not have.
    """
    reasons = unsafe_because(cls, vouched=vouched)
    shared = set(cls.model_fields) if fields_set is None else set(fields_set)
    if unknown := sorted(shared - cls.model_fields.keys()):
        reasons.append(f"its fields set names {', '.join(unknown)}, which are not its fields")
    if reasons:
        raise UnsafeModelError(
            f"{cls.__qualname__} cannot be built without validation: " + "; ".join(reasons)
        )
    new, set_dict, set_fields_set = _new, _set_dict, _set_fields_set
    set_extra, set_private = _set_extra, _set_private

    def build(values: dict[str, Any]) -> M:
        model: M = new(cls)
        set_dict(model, values)
        set_fields_set(model, shared)
        set_extra(model, None)
        set_private(model, None)
        return model

    return build


def sharing_fields_set(cls: type[M], make: Callable[[V], M]) -> Callable[[V], M]:
    """``make`` (a validating constructor of ``cls``), whose models with every field set share
    one fields set instead of holding one each (why that is safe: the module's rules).

    ``make`` itself when ``cls`` is not frozen.
    """
    if not cls.model_config.get("frozen"):
        return make
    every = set(cls.model_fields)
    set_fields_set = _set_fields_set

    def shared(value: V) -> M:
        model = make(value)
        if model.__pydantic_fields_set__ == every:  # the slot itself: a property costs a call
            set_fields_set(model, every)
        return model

    return shared


def indistinguishable(fast: object, slow: object) -> bool:
    """Whether a model built directly is the validated one in every way a caller, a store or a
    serializer can observe: type, equality, ``repr``, JSON, ``model_dump``, the fields set of it
    and of every model nested in it, field order, each field's type (an enum member is no plain
    string), a time's zone object, and hash (or unhashability)."""
    if type(fast) is not type(slow):
        return False
    if not isinstance(fast, BaseModel) or not isinstance(slow, BaseModel):
        return bool(fast == slow) and repr(fast) == repr(slow)
    return (
        fast == slow
        and repr(fast) == repr(slow)
        and fast.model_dump_json() == slow.model_dump_json()
        and fast.model_dump() == slow.model_dump()
        and fast.model_fields_set == slow.model_fields_set
        and list(vars(fast)) == list(vars(slow))
        and _hash_or_none(fast) == _hash_or_none(slow)
        and all(
            _nested_alike(getattr(fast, name), getattr(slow, name))
            for name in type(slow).model_fields
        )
    )


def _nested_alike(fast: object, slow: object) -> bool:
    if isinstance(slow, BaseModel):
        return indistinguishable(fast, slow)
    if isinstance(slow, datetime):  # the same zone object, as `UTC` is compared by identity
        return type(fast) is type(slow) and fast.tzinfo is slow.tzinfo
    if isinstance(slow, list | tuple):
        return (
            isinstance(fast, list | tuple)
            and len(fast) == len(slow)
            and all(_nested_alike(f, s) for f, s in zip(fast, slow, strict=True))
        )
    return type(fast) is type(slow)


def _hash_or_none(model: BaseModel) -> int | None:
    try:
        return hash(model)
    except TypeError:  # a model holding a list or dict cannot be hashed, built either way
        return None


def proven(pairs: Iterable[tuple[Callable[[], object], Callable[[], object]]]) -> bool:
    """Whether each ``(shortcut, validated)`` pair builds indistinguishable models.

    A shortcut's owner runs this once on samples covering each way it builds; ``False`` if any
    pair differs or anything raises (a pydantic release that changed its internals), and the
    owner then validates everything.
    """
    try:
        return all(indistinguishable(fast(), slow()) for fast, slow in pairs)
    except Exception:
        return False
