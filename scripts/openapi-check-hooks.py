"""Schemathesis hooks of scripts/openapi-check.sh.

Two things a generator cannot know from a schema alone, and nothing else:

1. `positive_data_acceptance_or_stated_refusal` replaces the built-in positive_data_acceptance
   check. A schema-valid request must still be accepted, except when the server refuses it for
   one of the few rules the document states in words because JSON Schema cannot say them (they
   depend on data already on the server, or compare array items by one field), *and* the
   request really breaks that rule:
     - `start` past X-Total-Count on a list (the 400 names start and the total; both checked);
     - a credential id used twice in one product (checked in the request body);
     - a PATCH webhook entry naming a subscriptionId the product does not have, or the same one
       twice (the entry is checked to carry that subscriptionId).
   Any other refusal of valid data fails the run, as the built-in check would.

2. Product names are unique per partner (a duplicate is the documented 409). The generator
   repeats names across cases, so a name this run has already seen (sent, or in a response) is
   given a fresh suffix before a positive create is sent, keeping its pattern and length rules.
   Without this nearly every create would meet the 409 and the create path would go untested.
"""

import itertools
import re

import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance

NAME_MAX = 64  # partner_api::product::NAME_MAX; the document states it as name.maxLength
_seen_names: set[str] = set()
_counter = itertools.count(1)


def _is_positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


def _error(response) -> dict:
    try:
        body = response.json()
    except Exception:
        return {}
    return body if isinstance(body, dict) else {}


def _start_past_total(case, error: dict) -> bool:
    match = re.fullmatch(r"start (\d+) is past the end of the list \((\d+) items\)", error.get("details", ""))
    if match is None or error.get("summary") != "invalid `start` parameter":
        return False
    start, total = int(match[1]), int(match[2])
    sent = (case.query or {}).get("start")
    return start > total and str(sent).strip() == str(start)


def _credential_used_twice(case, error: dict) -> bool:
    match = re.match(r"credentials\[(\d+)\]\.id ", error.get("summary", ""))
    body = case.body if isinstance(case.body, dict) else {}
    credentials = body.get("credentials")
    if match is None or not isinstance(credentials, list):
        return False
    index = int(match[1])
    ids = [c.get("id") for c in credentials if isinstance(c, dict)]
    return index < len(ids) and ids[index] in ids[:index]


def _unknown_subscription(case, error: dict) -> bool:
    match = re.match(
        r"webhooks\[(\d+)\]\.subscriptionId: (this product has no subscription|subscription .* is listed twice)",
        error.get("summary", ""),
    )
    body = case.body if isinstance(case.body, dict) else {}
    hooks = body.get("webhooks")
    if match is None or not isinstance(hooks, list) or int(match[1]) >= len(hooks):
        return False
    entry = hooks[int(match[1])]
    return isinstance(entry, dict) and isinstance(entry.get("subscriptionId"), str)


STATED_RULES = {
    ("GET", "/partner/v2/products"): [_start_past_total],
    ("GET", "/partner/v2/transactions"): [_start_past_total],
    ("POST", "/partner/v2/products"): [_credential_used_twice],
    ("PATCH", "/partner/v2/products/{id}"): [_credential_used_twice, _unknown_subscription],
}


@schemathesis.check
def positive_data_acceptance_or_stated_refusal(ctx, response, case):
    try:
        return positive_data_acceptance(ctx, response, case)
    except AssertionError:
        if response.status_code == 400:
            error = _error(response)
            rules = STATED_RULES.get((case.operation.method.upper(), case.operation.path), [])
            if error.get("errorCode") == "invalid_request" and any(rule(case, error) for rule in rules):
                return None
        raise


def _fresh_name(name: str) -> str:
    suffix = f"~{next(_counter)}"
    return name[: NAME_MAX - len(suffix)] + suffix


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.operation.method.upper() != "POST" or case.operation.path != "/partner/v2/products":
        return
    body = case.body
    if not _is_positive(case) or not isinstance(body, dict) or not isinstance(body.get("name"), str):
        return
    if body["name"] in _seen_names:
        body["name"] = _fresh_name(body["name"])
    _seen_names.add(body["name"])


@schemathesis.hook
def after_call(ctx, case, response):
    if not case.operation.path.startswith("/partner/v2/products"):
        return
    try:
        body = response.json()
    except Exception:
        return
    for item in body if isinstance(body, list) else [body]:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            _seen_names.add(item["name"])
