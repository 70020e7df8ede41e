"""Loading `function_app.py` by path and describing its functions as plain data.

`FunctionApp.get_functions()` may be called only once per app (a second call raises "does not have a unique function
name"), so `describe_functions` calls it once and the host keeps the result.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import azure.functions as func

RETURN = "$return"


@dataclass(frozen=True)
class BindingSpec:
    """One binding of a function, with its settings as function.json would have them (strings, not enums)."""

    name: str
    type: str
    direction: str  # "in" | "out" | "inout"
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FunctionSpec:
    """A function of the app: its trigger, its other bindings and the Python function to call."""

    name: str
    trigger: BindingSpec
    inputs: tuple[BindingSpec, ...]  # input bindings other than the trigger
    outputs: tuple[BindingSpec, ...]  # output bindings passed as `func.Out` parameters
    returns: BindingSpec | None  # the `$return` binding (`http` for HTTP functions)
    user_function: Callable[..., Any]

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.user_function)


class FunctionAppError(Exception):
    """The function app cannot be loaded or has a function this host cannot run; the message says which and why."""


def load_app(path: Path) -> func.FunctionApp:
    """Import `path` (a function_app.py) as module `function_app` and return its `FunctionApp`."""
    path = path.resolve()
    if not path.is_file():
        raise FunctionAppError(f"no function app at {path}")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # as the worker does: the app imports its siblings
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise FunctionAppError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    apps = [value for value in vars(module).values() if isinstance(value, func.FunctionApp)]
    if len(apps) != 1:
        raise FunctionAppError(f"{path} must define exactly one azure.functions.FunctionApp, found {len(apps)}")
    return apps[0]


def describe_functions(app: func.FunctionApp) -> tuple[FunctionSpec, ...]:
    """Every function of `app` as a `FunctionSpec`. Call once per app."""
    specs = []
    for function in app.get_functions():
        bindings = [_binding(raw) for raw in json.loads(function.get_function_json())["bindings"]]
        # Every function the app registered has a name (azure.functions types the getter as optional).
        specs.append(_function_spec(function.get_function_name(), bindings, function.get_user_function()))  # type: ignore[arg-type]
    return tuple(specs)


def _binding(raw: Mapping[str, Any]) -> BindingSpec:
    return BindingSpec(name=raw["name"], type=raw["type"], direction=str(raw["direction"]).lower(), settings=raw)


def _function_spec(name: str, bindings: list[BindingSpec], user_function: Callable[..., Any]) -> FunctionSpec:
    triggers = [b for b in bindings if b.type.endswith("Trigger")]
    if len(triggers) != 1:
        raise FunctionAppError(f"function {name!r} has {len(triggers)} triggers; it needs exactly one")
    trigger = triggers[0]
    inputs = tuple(b for b in bindings if b.direction in ("in", "inout") and b is not trigger)
    outputs = tuple(b for b in bindings if b.direction == "out" and b.name != RETURN)
    returns = next((b for b in bindings if b.name == RETURN), None)
    parameters = set(inspect.signature(user_function).parameters)
    bound = {trigger.name, *(b.name for b in inputs), *(b.name for b in outputs)}
    if parameters - bound:
        raise FunctionAppError(f"function {name!r}: parameters {sorted(parameters - bound)} have no binding")
    if bound - parameters:
        raise FunctionAppError(f"function {name!r}: bindings {sorted(bound - parameters)} have no parameter")
    return FunctionSpec(name, trigger, inputs, outputs, returns, user_function)
