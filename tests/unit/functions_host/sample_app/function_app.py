"""A small function app that exercises the local host: route templates, auth levels, outputs, errors."""

import json

import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)


def _echo(req: func.HttpRequest, name: str) -> func.HttpResponse:
    body = {
        "function": name,
        "method": req.method,
        "url": req.url,
        "params": dict(req.params),
        "route": dict(req.route_params),
        "body": req.get_body().decode("utf-8", "replace"),
        "contentType": req.headers.get("content-type"),
    }
    return func.HttpResponse(
        json.dumps(body), status_code=200, mimetype="application/json", headers={"X-Served-By": name}
    )


@app.route(route="items/{id:int}", methods=["GET"])
def item_by_id(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "item_by_id")


@app.route(route="items/{name}", methods=["GET"])
def item_by_name(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "item_by_name")


@app.route(route="items/special", methods=["GET"])
def item_special(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "item_special")


@app.route(route="echo", methods=["POST", "PUT"])
def echo(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "echo")


@app.route(route="files/{*rest}", auth_level=func.AuthLevel.ANONYMOUS)
def files(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "files")


@app.route(route="pages/{page?}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def pages(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "pages")


@app.route(route="admin/ping", methods=["GET"], auth_level=func.AuthLevel.ADMIN)
def admin_ping(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "admin_ping")


@app.function_name("default_route")
@app.route(methods=["GET"])
def unnamed(req: func.HttpRequest) -> str:
    return "plain text"


@app.route(route="boom", methods=["GET"])
def boom(req: func.HttpRequest) -> func.HttpResponse:
    raise RuntimeError("secret detail that must not reach the caller")


@app.route(route="async/{word:alpha}", methods=["GET"])
async def async_word(req: func.HttpRequest) -> func.HttpResponse:
    return _echo(req, "async_word")


@app.route(route="enqueue", methods=["POST"])
@app.queue_output(arg_name="msg", queue_name="out-items", connection="AzureWebJobsStorage")
def enqueue(req: func.HttpRequest, msg: func.Out[str]) -> func.HttpResponse:
    if req.params.get("skip") != "1":
        msg.set(req.get_body().decode("utf-8"))
    return func.HttpResponse("queued", status_code=202)


# --- a timer, for the local host's timer triggers -------------------------------------------------------------------
# Tests change TICK_BEHAVIOUR and read TICKS through the loaded module (`spec.user_function.__globals__`).
TICK_BEHAVIOUR = {"seconds": 0.0, "fail": False}
TICKS: list[dict] = []


@app.timer_trigger(schedule="* * * * * *", arg_name="timer", run_on_startup=True)
def every_second(timer: func.TimerRequest) -> None:
    import time

    started = time.monotonic()
    time.sleep(TICK_BEHAVIOUR["seconds"])
    TICKS.append(
        {
            "pastDue": timer.past_due,
            "started": started,
            "ended": time.monotonic(),
            "next": timer.schedule_status.get("Next"),
        }
    )
    if TICK_BEHAVIOUR["fail"]:
        raise RuntimeError("the tick failed on purpose")
