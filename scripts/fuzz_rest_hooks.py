"""Schemathesis hooks for scripts/fuzz-rest (loaded through SCHEMATHESIS_HOOKS).

Two extra checks on every answer:

- `connect_error_body`: an error answer (4xx, 5xx) carries Connect's body
  `{"error_code": <the status>, "message": <text>}` (`/health` has its own body);
- `server_error_only_for_a_body`: a standalone worker answers 5xx only for a request body it
  cannot use (malformed JSON, wrong types: Connect's 500s), never for an operation that takes
  no body (`/health`, and a restart whose instance fails to start, aside).

And steering, so that the fuzzer reaches handlers beyond "not found": generated cases are
sometimes aimed at a connector that exists (FUZZ_REST_TARGET, recreated whenever the fuzzer
deletes it), at task 0, at real plugins and loggers, and given a valid connector config with
the generated keys merged in; a negative create whose config is well typed gets a usable one,
so that its one wrong field (a `name` or `initial_state` of the wrong type, an unknown field)
is what the worker must refuse. The sentinel connector scripts/fuzz-rest checks afterwards is
never named here, so the fuzzer cannot reach it except through a bug.
"""

import itertools
import json
import os
import urllib.parse

import requests
import schemathesis
from hypothesis import strategies as st

BASE = os.environ["FUZZ_REST_URL"]
TARGET = os.environ["FUZZ_REST_TARGET"]
TARGET_CONFIG = json.loads(os.environ["FUZZ_REST_TARGET_CONFIG"])
PLUGINS = [
    "FileStreamSource",
    "org.apache.kafka.connect.file.FileStreamSinkConnector",
    "StringConverter",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter",
]
LOGGERS = ["root", "tributary_runtime", "org.apache.kafka.connect"]
_NAMES = itertools.count()
CONFIG_BODIES = {
    ("PUT", "/connectors/{name}/config"),
    ("PATCH", "/connectors/{name}/config"),
    ("PUT", "/connector-plugins/{plugin}/config/validate"),
}


def _has_body(case):
    return "requestBody" in case.operation.definition.raw


@schemathesis.check
def connect_error_body(ctx, response, case):
    """Error answers carry {"error_code": <status>, "message": <text>}."""
    if response.status_code < 400 or case.path == "/health":
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"error answer {response.status_code} is not JSON: {response.content[:200]!r}")
    if not isinstance(body, dict) or body.get("error_code") != response.status_code:
        raise AssertionError(f"error_code does not repeat the status {response.status_code}: {body}")
    if not isinstance(body.get("message"), str):
        raise AssertionError(f"error answer without a message: {body}")
    return None


# Restarts answer 500 when the instance cannot be started again, as Connect's do.
RESTARTS = {"/connectors/{name}/restart", "/connectors/{name}/tasks/{task}/restart"}


def _start_failure(case, response):
    if case.path not in RESTARTS:
        return False
    try:
        return json.loads(response.content)["message"].startswith("Failed to start")
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


@schemathesis.check
def server_error_only_for_a_body(ctx, response, case):
    """5xx only for operations that read a request body (the worker is standalone), and for a
    restart whose instance fails to start."""
    if (
        response.status_code >= 500
        and case.path != "/health"
        and not _has_body(case)
        and not _start_failure(case, response)
    ):
        raise AssertionError(
            f"{case.method} {case.path} takes no body but answered {response.status_code}: "
            f"{response.content[:300]!r}"
        )
    return None


# Operations that answer for any connector name, known or not, as Connect's do (the active
# topics of an unknown connector are an empty list): "still available after DELETE" is
# expected there.
NAME_INDEPENDENT = {"/connectors/{name}/topics", "/connectors/{name}/topics/reset"}


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but "still available after DELETE" (ST301) on the name-independent
    operations and on the target connector, which `after_call` recreates right after each
    DELETE of it (so it is meant to be available again)."""
    if failure.code != "ST301":
        return True
    if case.path in NAME_INDEPENDENT:
        return False
    return (case.path_parameters or {}).get("name") != TARGET


def _aim(case, how, pick=0):
    """`how` 0: the case as generated; 1: aimed at real names; 2: also a usable body. `pick`
    chooses among the real plugins and loggers.

    Negative cases (data the schema forbids) are left alone: aiming them could make them valid
    while Schemathesis still expects them to be refused.
    """
    meta = case.meta
    if how == 0 or meta is None:
        return case
    if meta.generation.mode.is_negative:
        return _aim_negative(case)
    aimed = case.derive()
    params = dict(aimed.path_parameters)
    if "name" in params:
        params["name"] = TARGET
    if "task" in params:
        params["task"] = 0
    if "plugin" in params:
        params["plugin"] = PLUGINS[pick % len(PLUGINS)]
    if "logger" in params:
        params["logger"] = LOGGERS[pick % len(LOGGERS)]
    aimed.path_parameters = params
    if how == 2 and (case.method, case.path) in CONFIG_BODIES:
        extra = aimed.body if isinstance(aimed.body, dict) else {}
        body = {**extra, **TARGET_CONFIG}
        if case.path.endswith("/validate"):
            aimed.path_parameters = {**params, "plugin": "FileStreamSource"}
            body.pop("name", None)
        aimed.body = body
    elif how == 2 and (case.method, case.path) == ("POST", "/connectors"):
        generated = aimed.body if isinstance(aimed.body, dict) else {}
        extra = generated.get("config") if isinstance(generated.get("config"), dict) else {}
        name = generated.get("name") if isinstance(generated.get("name"), str) else ""
        config = {**extra, **TARGET_CONFIG}
        config.pop("name", None)
        body = {"name": f"fuzz-made-{name}"[:200], "config": config}
        if "initial_state" in generated:
            body["initial_state"] = generated["initial_state"]
        aimed.body = body
    return aimed


def _scalar(v):
    return v is None or isinstance(v, (str, int, float, bool))


def _aim_negative(case):
    """A negative create whose `config` is a well-typed map gets a usable config (with the
    generated keys merged in), so that what is wrong elsewhere in the body (`name`,
    `initial_state`, an unknown field) meets a request that would otherwise succeed."""
    body = case.body
    if (case.method, case.path) != ("POST", "/connectors") or not isinstance(body, dict):
        return case
    config = body.get("config")
    if not isinstance(config, dict) or not all(_scalar(v) for v in config.values()):
        return case
    aimed = case.derive()
    # Null values are allowed by the schema but make the config invalid: leave them out, and
    # give a string name (allowed, so not what is wrong) a fresh valid value.
    merged = {**{k: v for k, v in config.items() if v is not None}, **TARGET_CONFIG}
    merged.pop("name", None)
    aimed.body = {**body, "config": merged}
    if isinstance(body.get("name"), str):
        aimed.body["name"] = f"fuzz-negative-{next(_NAMES)}"
    return aimed


@schemathesis.hook
def flatmap_case(context, case):
    choice = st.tuples(st.sampled_from([0, 0, 1, 2]), st.integers(min_value=0, max_value=11))
    return choice.map(lambda c: _aim(case, *c))


@schemathesis.hook
def map_case(context, case):
    """The coverage phase (which does not run `flatmap_case`): its negative creates get a
    usable config too, so that each wrong field is tried on its own."""
    meta = case.meta
    if meta is not None and meta.phase.name == "coverage" and meta.generation.mode.is_negative:
        return _aim_negative(case)
    return case


@schemathesis.hook
def after_call(context, case, response):
    """Recreates the target connector when the fuzzer deleted it."""
    if (
        case.method == "DELETE"
        and case.path == "/connectors/{name}"
        and case.path_parameters.get("name") == TARGET
        and response.status_code == 204
    ):
        url = f"{BASE}/connectors/{urllib.parse.quote(TARGET, safe='')}/config"
        requests.put(url, json=TARGET_CONFIG, timeout=30).raise_for_status()
