"""The local host's HTTP behaviour, driven through its ASGI app with starlette's TestClient."""

import logging
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tools.functions_host.config import HostConfig
from tools.functions_host.functions import BindingSpec, describe_functions, load_app
from tools.functions_host.http_app import FunctionsHttpApp
from tools.functions_host.invocation import UnsupportedBinding
from tools.functions_host.keys import KeyRing

SAMPLE = Path(__file__).parent / "sample_app" / "function_app.py"
KEYS = KeyRing(master_key="master-key", host_keys=("host-key",), function_keys={"echo": ("echo-key",)})


class RecordingDelivery:
    def __init__(self) -> None:
        self.delivered: list[tuple[str, object]] = []

    def deliver(self, binding: BindingSpec, value: object) -> None:
        self.delivered.append((binding.settings["queueName"], value))


def make_app(config: HostConfig | None = None, deliveries=None, **kwargs) -> FunctionsHttpApp:
    functions = describe_functions(load_app(SAMPLE))
    config = config or HostConfig.load(SAMPLE.parent / "host.json")
    return FunctionsHttpApp(
        functions, config, KEYS, deliveries if deliveries is not None else {"queue": RecordingDelivery()}, **kwargs
    )


@pytest.fixture
def client() -> TestClient:
    return TestClient(make_app(), base_url="http://testserver")


def test_host_json_settings_are_read():
    assert HostConfig.load(SAMPLE.parent / "host.json") == HostConfig("svc", 4, 8)
    assert HostConfig.load(SAMPLE.parent / "missing.json") == HostConfig("api", 100, 200)


def test_route_template_with_constraint_and_key_in_code(client):
    response = client.get("/svc/items/42", params={"code": "host-key", "x": "1"})
    assert response.status_code == 200
    body = response.json()
    assert body["function"] == "item_by_id"
    assert body["route"] == {"id": "42"}
    assert body["params"] == {"code": "host-key", "x": "1"}
    assert body["url"] == "http://testserver/svc/items/42?code=host-key&x=1"
    assert response.headers["x-served-by"] == "item_by_id"
    assert response.headers["content-type"] == "application/json; charset=utf-8"


def test_literal_route_wins_and_paths_are_case_insensitive(client):
    headers = {"x-functions-key": "host-key"}
    assert client.get("/svc/items/special", headers=headers).json()["function"] == "item_special"
    by_name = client.get("/SVC/ITEMS/AbC", headers=headers).json()
    assert (by_name["function"], by_name["route"]) == ("item_by_name", {"name": "AbC"})


SAMPLE_ROUTES = [
    "GET /svc/admin/ping",
    "GET /svc/items/special",
    "GET /svc/items/{id:int}",
    "GET /svc/async/{word:alpha}",
    "GET /svc/items/{name}",
    "GET /svc/pages/{page?}",
    "ANY /svc/files/{*rest}",
    "POST,PUT /svc/echo",
    "GET /svc/default_route",
    "GET /svc/boom",
    "POST /svc/enqueue",
]


def test_wrong_method_is_404_as_in_azure_saying_which_methods_the_path_answers(client):
    response = client.post("/svc/items/42", headers={"x-functions-key": "host-key"})
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "no function answers POST /svc/items/42 (/svc/items/42 answers GET)"
    assert sorted(body["routes"]) == sorted(SAMPLE_ROUTES)


def test_a_wrong_path_is_404_listing_the_routes_that_exist(client):
    response = client.get("/svc/itemz/42")
    assert response.status_code == 404
    body = response.json()
    assert body["error"] == "no function answers GET /svc/itemz/42"
    assert sorted(body["routes"]) == sorted(SAMPLE_ROUTES)


def test_paths_outside_the_route_prefix_are_404(client):
    assert client.get("/api/items/42", headers={"x-functions-key": "host-key"}).status_code == 404


def test_empty_route_prefix_serves_at_the_root():
    client = TestClient(make_app(HostConfig(route_prefix="")))
    assert client.get("/items/42", headers={"x-functions-key": "host-key"}).json()["route"] == {"id": "42"}


@pytest.mark.parametrize("headers", [{}, {"x-functions-key": "wrong"}, {"x-functions-key": "echo-key"}])
def test_function_level_without_a_valid_key_is_401(client, headers):
    response = client.get("/svc/items/42", headers=headers)
    assert response.status_code == 401
    assert response.json() == {
        "error": "missing or wrong function key: send it in the x-functions-key header or as ?code="
    }


def test_function_key_master_key_and_host_key_open_a_function_level_route(client):
    for key in ("echo-key", "master-key", "host-key"):
        assert client.post("/svc/echo", params={"code": key}, content=b"hi").status_code == 200


def test_admin_level_needs_the_master_key(client):
    assert client.get("/svc/admin/ping", headers={"x-functions-key": "host-key"}).status_code == 401
    assert client.get("/svc/admin/ping", headers={"x-functions-key": "master-key"}).status_code == 200


def test_anonymous_catch_all_and_optional_routes(client):
    assert client.get("/svc/files/a/b/c.txt").json()["route"] == {"rest": "a/b/c.txt"}
    assert client.delete("/svc/files").json()["route"] == {}  # no methods listed: every method
    assert client.get("/svc/pages/3").json()["route"] == {"page": "3"}
    assert client.get("/svc/pages").json()["route"] == {}


def test_request_body_headers_and_method_reach_the_function(client):
    response = client.put(
        "/svc/echo?code=echo-key&a=%2F1", content=b'{"x": 1}', headers={"Content-Type": "application/json"}
    )
    body = response.json()
    assert (body["method"], body["body"], body["contentType"]) == ("PUT", '{"x": 1}', "application/json")
    assert body["params"] == {"code": "echo-key", "a": "/1"}


def test_default_route_is_the_function_name_and_a_str_result_is_text(client):
    response = client.get("/svc/default_route", headers={"x-functions-key": "host-key"})
    assert (response.status_code, response.text) == (200, "plain text")
    assert response.headers["content-type"].startswith("text/plain")


def test_async_functions_run_too(client):
    response = client.get("/svc/async/Hello", headers={"x-functions-key": "host-key"})
    assert response.json()["route"] == {"word": "Hello"}


def test_unhandled_exception_is_a_generic_500_with_the_trace_only_in_the_log(client, caplog):
    with caplog.at_level(logging.ERROR, logger="ol2purview.host"):
        response = client.get("/svc/boom", headers={"x-functions-key": "host-key"})
    assert response.status_code == 500
    body = response.json()
    assert set(body) == {"error", "invocationId"} and body["error"] == "internal error"
    assert "secret detail" not in response.text
    assert "secret detail" in caplog.text and "Traceback" in caplog.text and body["invocationId"] in caplog.text


def test_output_binding_values_are_delivered_after_the_function_returns():
    delivery = RecordingDelivery()
    client = TestClient(make_app(deliveries={"queue": delivery}))
    response = client.post("/svc/enqueue", headers={"x-functions-key": "host-key"}, content=b"payload-1")
    assert (response.status_code, response.text) == (202, "queued")
    client.post("/svc/enqueue", params={"skip": "1"}, headers={"x-functions-key": "host-key"}, content=b"x")
    assert delivery.delivered == [("out-items", "payload-1")]


def test_a_binding_type_without_delivery_is_refused_at_start():
    with pytest.raises(UnsupportedBinding) as raised:
        make_app(deliveries={})
    assert str(raised.value) == (
        "function 'enqueue': output binding 'msg' of type 'queue' has no delivery in this host (have: none)"
    )


def test_body_over_the_host_limit_is_413(client):
    small = TestClient(make_app(max_request_bytes=10))
    response = small.post("/svc/echo", headers={"x-functions-key": "host-key"}, content=b"x" * 11)
    assert response.status_code == 413
    assert small.post("/svc/echo", headers={"x-functions-key": "host-key"}, content=b"x" * 10).status_code == 200


def test_requests_beyond_max_outstanding_are_429_once_their_body_has_arrived():
    client = TestClient(make_app(HostConfig(route_prefix="svc", max_outstanding_requests=0)))
    response = client.get("/svc/files/x")
    assert response.status_code == 429
    assert response.json() == {"error": "too many requests in flight; retry later"}


def test_a_trigger_type_the_host_does_not_run_is_refused_with_its_name():
    from tools.functions_host.functions import FunctionSpec
    from tools.functions_host.invocation import check_supported

    queue_function = FunctionSpec("drain", BindingSpec("msg", "queueTrigger", "in"), (), (), None, lambda msg: None)
    with pytest.raises(UnsupportedBinding) as raised:
        check_supported([queue_function], {"httpTrigger"}, {})
    assert (
        str(raised.value) == "function 'drain': this host does not run 'queueTrigger' triggers (supported: httpTrigger)"
    )


class FailingDelivery:
    def deliver(self, binding: BindingSpec, value: object) -> None:
        raise ConnectionError("queue storage unreachable at 10.0.0.5")


def test_an_output_that_cannot_be_delivered_is_a_503_without_details():
    client = TestClient(make_app(deliveries={"queue": FailingDelivery()}))
    response = client.post("/svc/enqueue", headers={"x-functions-key": "host-key"}, content=b"payload")
    assert response.status_code == 503
    assert response.json()["error"] == "the request could not be stored; send it again"
    assert "10.0.0.5" not in response.text


def test_admin_endpoints_need_the_master_key_and_say_so():
    client = TestClient(make_app(admin_endpoints={"/admin/ol2purview/status": lambda: {"state": "Running"}}))
    url = "/admin/ol2purview/status"
    assert client.get(url, params={"code": "master-key"}).json() == {"state": "Running"}
    assert client.get(url, headers={"x-functions-key": "master-key"}).status_code == 200
    for key in ("host-key", "wrong", None):
        response = client.get(url, params={"code": key} if key else {})
        assert (response.status_code, response.json()) == (
            401,
            {
                "error": "missing or wrong function key: this endpoint needs the master key, not a function key (printed "
                "by `ol2purview serve`, kept in host-keys.json in its data folder); send it in the "
                "x-functions-key header or as ?code="
            },
        )
