#!/usr/bin/env python3
"""Writes a wrk script that posts signed, spec-shaped 2 KiB notifications.

Why: `wrk` is the outside load generator of the listener's latency rounds (BENCHMARKS.md,
listener). The notifications are the ack bench's (`../support/payload.rs`): the spec's fields,
a random UUID eventId each, padded to 2,048 bytes; signed with HMAC-SHA256 (Base64 in
`Svc-Signature`) under KEY for subscription SUB. wrk cycles through COUNT distinct ones, and
its `done` prints p50/p90/p99/p99.9/max from its latency histogram.

With SUBS=N (N > 1), every pass over the COUNT bodies names another subscription, SUB-0 to
SUB-(N-1), all keyed with KEY (run.sh gives the listener those keys): each of the THREADS wrk
threads (2) starts at its own and steps over the others', so no notification is sent twice
until N passes in all. Without it (SUBS=1, the default and the rounds before 12-07) the same
COUNT notifications come round again and again, so past the first COUNT requests every one is
a redelivery, which updates its notification's attempt count in the store: a load of its own.

Usage: make_post_lua.py OUT.lua [COUNT] (env KEY, SUB, SUBS, THREADS; defaults match run.sh).
"""
import base64
import hashlib
import hmac
import os
import sys
import uuid

BODY_SIZE = 2048
KEY = os.environ.get("KEY", "Abcdefghijklmnopqrstuvwxyz0123!@")
SUB = os.environ.get("SUB", "sub-bench")
SUBS = int(os.environ.get("SUBS", "1"))
# wrk's threads (-t): each starts at its own subscription and steps over the others'.
THREADS = int(os.environ.get("THREADS", "2"))


def body(event_id: str) -> bytes:
    head = (
        '{"eventId":"%s","eventTime":"2024-05-01T10:00:00Z","eventType":"created",'
        '"meta":{"instanceId":"bench","resourceId":"%s",'
        '"resourceType":"urn:svc:partner:transaction",'
        '"resourceRef":"https://svc.example/partner/v2/transactions/%s"},"padding":"'
        % (event_id, event_id, event_id)
    )
    tail = '"}'
    text = head + "x" * (BODY_SIZE - len(head) - len(tail)) + tail
    assert len(text) == BODY_SIZE
    return text.encode()


def lua_string(raw: str) -> str:
    return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    lines = ["bodies = {}", "signatures = {}"]
    for i in range(1, count + 1):
        raw = body(str(uuid.uuid4()))
        signature = base64.b64encode(hmac.new(KEY.encode(), raw, hashlib.sha256).digest())
        lines.append(f"bodies[{i}] = {lua_string(raw.decode())}")
        lines.append(f"signatures[{i}] = {lua_string(signature.decode())}")
    if SUBS > 1:
        subscription = f'string.format("%s-%d", {lua_string(SUB)}, passes % {SUBS})'
    else:
        subscription = lua_string(SUB)
    lines.append(
        f"""
threads_made = 0
setup = function(thread)
  thread:set("passes", threads_made)
  threads_made = threads_made + 1
end

passes = 0
counter = 0
request = function()
  if counter == {count} then
    counter = 0
    passes = passes + {THREADS}
  end
  counter = counter + 1
  return wrk.format("POST", "/webhooks", {{
    ["Content-Type"] = "application/json",
    ["Svc-SubscriptionId"] = {subscription},
    ["Svc-Signature"] = signatures[counter],
  }}, bodies[counter])
end

done = function(summary, latency, requests)
  local ms = function(us) return string.format("%.2f ms", us / 1000) end
  io.write(string.format("requests %d, errors %d (status %d, timeout %d)\\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read
      + summary.errors.write + summary.errors.timeout, summary.errors.status,
    summary.errors.timeout))
  io.write(string.format("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\\n",
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)),
    ms(latency:percentile(99.9)), ms(latency.max)))
end
"""
    )
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
