"""Calling a user function with its bindings, for any trigger: arguments in, output values delivered afterwards.

Output bindings (`func.Out` parameters, and a non-HTTP `$return`) are collected while the function runs and handed
to a `BindingDelivery` for their binding type once it returned, as the Azure host does. A binding type without a
delivery is refused when the host starts (`check_supported`), not at the first request.
"""
from __future__ import annotations

import functools
from typing import Any, Collection, Mapping, Protocol, TypeVar

import anyio
import anyio.to_thread
import azure.functions as func

from tools.functions_host.functions import BindingSpec, FunctionAppError, FunctionSpec

T = TypeVar("T")


class OutputValue(func.Out[T]):
    """The `func.Out` object passed for an output binding; remembers whether the function set it."""

    def __init__(self) -> None:
        self._value: T | None = None
        self.is_set = False

    def set(self, val: T) -> None:
        self._value = val
        self.is_set = True

    def get(self) -> T | None:  # type: ignore[override]
        return self._value


class BindingDelivery(Protocol):
    """Delivers the values a function set on output bindings of one type (e.g. "queue") to their target."""

    def deliver(self, binding: BindingSpec, value: Any) -> None:
        """Send `value` where `binding.settings` says (queue name, connection...). Raises on failure."""
        ...


class UnsupportedBinding(FunctionAppError):
    """The app uses a trigger or binding type this host cannot run."""


def check_supported(
    functions: Collection[FunctionSpec], trigger_types: Collection[str], deliveries: Mapping[str, BindingDelivery]
) -> None:
    """Raise `UnsupportedBinding` naming the first function whose trigger or bindings this host cannot serve."""
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


async def invoke(
    function: FunctionSpec,
    trigger_value: Any,
    deliveries: Mapping[str, BindingDelivery],
    limiter: anyio.CapacityLimiter,
) -> Any:
    """Run `function` with its trigger value (sync functions in a worker thread) and deliver its outputs.

    `limiter` caps how many functions run at once. Returns what the function returned.
    """
    outputs = {binding.name: OutputValue[Any]() for binding in function.outputs}
    call = functools.partial(function.user_function, **{function.trigger.name: trigger_value}, **outputs)
    if function.is_async:
        async with limiter:
            result = await call()
    else:
        result = await anyio.to_thread.run_sync(call, limiter=limiter)
    values = [(b, outputs[b.name].get()) for b in function.outputs if outputs[b.name].is_set]
    if function.returns is not None and function.returns.type != "http" and result is not None:
        values.append((function.returns, result))
    if values:
        await anyio.to_thread.run_sync(_deliver, values, deliveries, limiter=limiter)
    return result


def _deliver(values: list[tuple[BindingSpec, Any]], deliveries: Mapping[str, BindingDelivery]) -> None:
    for binding, value in values:
        deliveries[binding.type].deliver(binding, value)
