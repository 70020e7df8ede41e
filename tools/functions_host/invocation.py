"""Calling a user function with its bindings, for any trigger: arguments in, output values delivered afterwards.

Output bindings (`func.Out` parameters, and a non-HTTP `$return`) are collected while the function runs and handed
to a `BindingDelivery` for their binding type once it returned, as the Azure host does. A binding type without a
delivery is refused when the host starts (`check_supported`), not at the first request. A delivery that fails raises
`DeliveryFailed` (the HTTP host answers 503: the caller may send again; a queue trigger's message is retried).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable, Collection, Mapping, Protocol, TypeVar

import anyio
import anyio.to_thread
import azure.functions as func

from .functions import BindingSpec, FunctionAppError, FunctionSpec

T = TypeVar("T")


class OutputValue(func.Out[T]):
    """The `func.Out` object passed for an output binding; remembers whether the function set it."""

    def __init__(self) -> None:
        self._value: T | None = None
        self.is_set = False

    def set(self, val: T) -> None:
        self._value = val
        self.is_set = True

    # Why the type error is ignored: the base class's get() returns T; unset here answers None
    def get(self) -> T | None:  # type: ignore[override]
        return self._value


class BindingDelivery(Protocol):
    """Delivers the values a function set on output bindings of one type (e.g. "queue") to their target."""

    def deliver(self, binding: BindingSpec, value: Any) -> None:
        """Send `value` where `binding.settings` says (queue name, connection...). Raises on failure."""
        ...


class DeliveryFailed(Exception):
    """An output binding's value could not be delivered (e.g. the queue storage is unreachable)."""


class UnsupportedBinding(FunctionAppError):
    """The app uses a trigger or binding type this host cannot run."""


def check_supported(
    functions: Collection[FunctionSpec], trigger_types: Collection[str], deliveries: Collection[str]
) -> None:
    """Raise `UnsupportedBinding` naming the first function whose trigger or bindings this host cannot serve.
    `deliveries`: the output binding types this host delivers (any collection of names, e.g. a dict's keys)."""
    for function in functions:
        if function.trigger.type not in trigger_types:
            raise UnsupportedBinding(
                f"function {function.name!r}: this host does not run {function.trigger.type!r} triggers "
                f"(supported: {', '.join(sorted(trigger_types))})"
            )
        for binding in function.inputs:
            raise UnsupportedBinding(
                f"function {function.name!r}: input binding {binding.name!r} of type {binding.type!r} is not supported"
            )
        for binding in _delivered_bindings(function):
            if binding.type not in deliveries:
                raise UnsupportedBinding(
                    f"function {function.name!r}: output binding {binding.name!r} of type {binding.type!r} has no "
                    f"delivery in this host (have: {', '.join(sorted(deliveries)) or 'none'})"
                )


def _delivered_bindings(function: FunctionSpec) -> list[BindingSpec]:
    returns = [function.returns] if function.returns is not None and function.returns.type != "http" else []
    return [*function.outputs, *returns]


def _prepare(function: FunctionSpec, trigger_value: Any) -> tuple[Callable[[], Any], dict[str, OutputValue[Any]]]:
    outputs = {binding.name: OutputValue[Any]() for binding in function.outputs}
    call = functools.partial(function.user_function, **{function.trigger.name: trigger_value}, **outputs)
    return call, outputs


def _output_values(
    function: FunctionSpec, outputs: Mapping[str, OutputValue[Any]], result: Any
) -> list[tuple[BindingSpec, Any]]:
    values = [(b, outputs[b.name].get()) for b in function.outputs if outputs[b.name].is_set]
    if function.returns is not None and function.returns.type != "http" and result is not None:
        values.append((function.returns, result))
    return values


async def invoke(
    function: FunctionSpec,
    trigger_value: Any,
    deliveries: Mapping[str, BindingDelivery],
    limiter: anyio.CapacityLimiter,
) -> Any:
    """Run `function` with its trigger value (sync functions in a worker thread) and deliver its outputs.

    `limiter` caps how many functions run at once. Returns what the function returned; raises `DeliveryFailed` when
    an output could not be delivered.
    """
    call, outputs = _prepare(function, trigger_value)
    if not function.is_async:  # the call and the delivery of its outputs in one trip to a worker thread
        return await anyio.to_thread.run_sync(_call_and_deliver, function, call, outputs, deliveries, limiter=limiter)
    async with limiter:
        result = await call()
    values = _output_values(function, outputs, result)
    if values:
        await anyio.to_thread.run_sync(deliver_outputs, values, deliveries, limiter=limiter)
    return result


def _call_and_deliver(
    function: FunctionSpec,
    call: Callable[[], Any],
    outputs: Mapping[str, OutputValue[Any]],
    deliveries: Mapping[str, BindingDelivery],
) -> Any:
    result = call()
    values = _output_values(function, outputs, result)
    if values:
        deliver_outputs(values, deliveries)
    return result


def invoke_in_thread(function: FunctionSpec, trigger_value: Any, deliveries: Mapping[str, BindingDelivery]) -> Any:
    """`invoke` for a caller that is a plain thread (the queue trigger's worker threads)."""
    call, outputs = _prepare(function, trigger_value)
    if function.is_async:
        return _call_and_deliver(function, lambda: asyncio.run(call()), outputs, deliveries)
    return _call_and_deliver(function, call, outputs, deliveries)


def deliver_outputs(values: list[tuple[BindingSpec, Any]], deliveries: Mapping[str, BindingDelivery]) -> None:
    """Deliver each value to its binding; any failure becomes `DeliveryFailed` naming the binding."""
    for binding, value in values:
        try:
            deliveries[binding.type].deliver(binding, value)
        except Exception as exc:
            raise DeliveryFailed(
                f"output binding {binding.name!r} ({binding.type}) could not be delivered: {type(exc).__name__}"
            ) from exc
