"""Route templates as the Azure Functions host reads them."""

import pytest

from tools.functions_host.routes import RouteTemplate, RouteTemplateError, full_template


def test_literal_segments_match_case_insensitively():
    template = RouteTemplate.parse("api/v1/lineage")
    assert template.match("/api/v1/lineage") == {}
    assert template.match("/API/V1/Lineage/") == {}
    assert template.match("/api/v1/lineage/batch") is None
    assert template.match("/api/v1") is None


def test_parameter_keeps_the_case_of_the_request():
    assert RouteTemplate.parse("items/{name}").match("/ITEMS/AbC") == {"name": "AbC"}
    assert RouteTemplate.parse("items/{name}").match("/items/a/b") is None


def test_int_constraint():
    template = RouteTemplate.parse("items/{id:int}")
    assert template.match("/items/-12") == {"id": "-12"}
    assert template.match("/items/12a") is None


def test_guid_and_bool_and_alpha_constraints():
    guid = "0189c6a4-7a43-7bd2-9d2c-0f7b2e4f6a10"
    assert RouteTemplate.parse("runs/{run:guid}").match(f"runs/{guid}") == {"run": guid}
    assert RouteTemplate.parse("runs/{run:guid}").match("runs/not-a-guid") is None
    assert RouteTemplate.parse("flags/{on:bool}").match("flags/TRUE") == {"on": "TRUE"}
    assert RouteTemplate.parse("words/{w:alpha}").match("words/abc1") is None


def test_optional_parameter_may_be_left_out():
    template = RouteTemplate.parse("pages/{page?}")
    assert template.match("/pages/7") == {"page": "7"}
    assert template.match("/pages") == {}
    assert template.match("/pages/") == {}


def test_catch_all_takes_the_rest_of_the_path():
    template = RouteTemplate.parse("files/{*rest}")
    assert template.match("/files/a/b/c.txt") == {"rest": "a/b/c.txt"}
    assert template.match("/files") == {}


def test_parameters_inside_a_segment():
    template = RouteTemplate.parse("export/{name}.{ext:alpha}")
    assert template.match("/export/report.csv") == {"name": "report", "ext": "csv"}
    assert template.match("/export/report") is None


def test_template_text_is_literal_not_a_pattern():
    template = RouteTemplate.parse("a.b/(x)")
    assert template.match("a.b/(x)") == {}
    assert template.match("aXb/(x)") is None


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("items/{id:regex(a+)}", "unsupported constraint 'regex(a+)'"),
        ("files/{*rest}/more", "catch-all parameter must be the last segment"),
        ("items/{1bad}", "bad parameter name '1bad'"),
        ("items/{a}/{A}", "a parameter name is used twice"),
        ("items/x{rest?}", "must fill a whole segment"),
        ("items//x", "empty segment"),
        ("items/a}", "unbalanced brace"),
    ],
)
def test_templates_the_host_cannot_serve_are_refused_with_a_reason(template, problem):
    with pytest.raises(RouteTemplateError) as raised:
        RouteTemplate.parse(template)
    assert problem in str(raised.value)
    assert template in str(raised.value)


def test_precedence_literal_then_constrained_then_free_then_catch_all():
    templates = ["x/{*rest}", "x/{name}", "x/{id:int}", "x/special"]
    ordered = sorted((RouteTemplate.parse(t) for t in templates), key=lambda t: t.precedence)
    assert [t.template for t in ordered] == ["x/special", "x/{id:int}", "x/{name}", "x/{*rest}"]


@pytest.mark.parametrize(
    ("prefix", "route", "expected"),
    [("api", "v1/lineage", "api/v1/lineage"), ("", "v1/lineage", "v1/lineage"), ("/api/", "/health", "api/health")],
)
def test_route_prefix_joins_the_route(prefix, route, expected):
    assert full_template(prefix, route) == expected
