"""Effect Ledger client for Python: the standard library only (urllib, json).

Mirrors the TypeScript SDK. ``Ledger.effect`` claims an effect before the provider call (a loser skips
without calling), passes the provider idempotency key derived from (key, epoch), and reports the
outcome with the provider's raw response in one request: done with a receipt, failed (a definitive
rejection, which frees the key), stuck, or unknown (anything ambiguous: a timeout, an exception, a 5xx,
a success without a receipt). Every POST carries an Idempotency-Key that stays the same across its
retries, so a retry can never claim or report twice.
"""

import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from base64 import b64encode
from email.utils import parsedate_to_datetime

__all__ = ["Ledger", "LedgerApiError", "ProviderRejected", "CallFailure", "RawResponse", "classify_http"]


class LedgerApiError(Exception):
    """An error answer of the API (a problem document), or ``network`` / ``timeout`` without one."""

    def __init__(self, status, code, detail, field=None, details=None):
        super().__init__(detail)
        self.status, self.code, self.detail, self.field = status, code, detail, field
        self.details = details or {}
        # Set by Ledger.effect when the outcome report itself failed: the report (raw response
        # included) that the ledger did not hear, for the caller to keep or send again.
        self.unreported = None


class ProviderRejected(Exception):
    """Raise from a call when the provider definitively said no without a response to store."""

    def __init__(self, message, evidence=None):
        super().__init__(message)
        self.evidence = evidence or {}


class CallFailure(Exception):
    """Raise from a call that got no response. ``sent='no'``: provably nothing left (a refused
    connection), the key is freed; ``sent='maybe'``: ambiguous, the effect becomes unknown."""

    def __init__(self, message, sent="maybe"):
        super().__init__(message)
        self.sent = sent


class RawResponse:
    """A provider's answer exactly as received: status, header pairs in order, body bytes."""

    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, list(headers), bytes(body)


def classify_http(raw):
    """2xx with an id is done; a definitive 4xx is failed; anything else is unknown."""
    try:
        body = json.loads(raw.body.decode("utf-8"))
    except ValueError:
        body = None
    evidence = {"status": raw.status, "body": body if body is not None else raw.body.decode("utf-8", "replace")[:2000]}
    if 200 <= raw.status < 300:
        receipt = isinstance(body, dict) and (body.get("id") or body.get("messageId") or body.get("transactionId"))
        if isinstance(receipt, str) and receipt:
            return ("done", receipt)
        return ("unknown", dict(evidence, why="success without a receipt (S2)"))
    # 409: providers answer it while a request with the same idempotency key is still running.
    if 400 <= raw.status < 500 and raw.status not in (408, 409, 429):
        return ("failed", evidence)
    return ("unknown", evidence)


# Answers that say nothing happened yet (rate limited, unavailable, a proxy's bad gateway or gateway
# timeout in front of the ledger): retried with the same Idempotency-Key, as the TypeScript SDK does.
RETRY_STATUSES = (429, 502, 503, 504)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib follows redirects to any host and copies the Authorization header along: the runtime
    key would go to whatever address a proxy names. The ledger never redirects, so a redirect is an
    error naming where it pointed."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class Ledger:
    """A runtime's door into the ledger over HTTP."""

    def __init__(self, base_url, runtime_key, timeout=30.0, retries=4, backoff=0.25, max_backoff=8.0,
                 in_progress_wait=130.0):
        self.base = base_url.rstrip("/") + "/api/v1"
        self.runtime_key = runtime_key
        self.timeout, self.retries, self.backoff, self.max_backoff = timeout, retries, backoff, max_backoff
        # While the server says this request's earlier attempt is still running (409 in_progress),
        # keep asking with the same key, apart from ``retries``: that attempt may still commit (a
        # claim won), and only the same key gets its answer. The server takes over a dead one at 120 s.
        self.in_progress_wait = in_progress_wait

    # -- the API -------------------------------------------------------------------------------
    def create_run(self, workflow, trigger_id):
        return self._request("POST", "/runs", {"workflow": workflow, "triggerId": trigger_id})

    def submit_plan(self, run_id, items):
        return self._request("POST", "/runs/%s/plan" % run_id, {"items": items})

    def read_run(self, run_id):
        return self._request("GET", "/runs/%s" % run_id)

    def claim(self, run_id, tool, action, record_id, target):
        body = {"runId": run_id, "tool": tool, "action": action, "recordId": record_id, "target": target}
        return self._request("POST", "/effects/claim", body)

    def report(self, key, outcome, epoch, attempt_id, receipt=None, evidence=None, response=None):
        """Reports the outcome of the claim ``attempt_id`` at ``epoch`` (both from the claim): the
        ledger refuses a report whose attempt is no longer the newest claim of the key (409), so a
        late report can never settle someone else's claim."""
        body = {"key": key, "outcome": outcome, "epoch": epoch, "attemptId": attempt_id}
        for name, value in (("receipt", receipt), ("evidence", evidence)):
            if value is not None:
                body[name] = value
        if response is not None:
            body["response"] = _raw_json(response)
        return self._request("POST", "/effects/outcome", body)

    def record_response(self, attempt_id, response):
        """Stores a provider's raw response on its attempt (R1), without moving the effect."""
        return self._request("POST", "/attempts/%s/response" % attempt_id, _raw_json(response))

    def read_effect(self, key):
        """One effect at its current epoch: state, receipt and the stored raw response."""
        return self._request("GET", "/effects/%s" % urllib.parse.quote(key, safe=""))

    # -- one effect ----------------------------------------------------------------------------
    def effect(self, run_id, tool, action, record, target, call, classify=classify_http):
        """Claims, calls ``call(ctx)`` (ctx: idempotency_key, key, epoch, attempt_id) for a
        RawResponse, and reports. Returns a dict with ``status`` skipped, done, failed, unknown or stuck."""
        claim = self.claim(run_id, tool, action, record, target)
        if not claim["claimed"]:
            return dict(status="skipped", key=claim["key"], epoch=claim["epoch"], state=claim["state"])
        key, epoch, attempt = claim["key"], claim["epoch"], claim["attemptId"]
        ctx = {"idempotency_key": claim["idempotencyKey"], "key": key, "epoch": epoch, "attempt_id": attempt}

        def settle(status, receipt=None, evidence=None, response=None):
            outcome = {"done": "done", "failed": "failed", "stuck": "stuck"}.get(status, "unknown")
            try:
                self.report(key, outcome, epoch, attempt, receipt, evidence if outcome != "done" else None, response)
            except LedgerApiError as error:
                # The ledger did not hear the outcome: the effect stays pending until its lease runs
                # out. The raw response alone may still get through (R1), so the reconciler can
                # complete the effect from its receipt instead of marking it unknown; the report goes
                # up with the error (``unreported``) for the caller to keep or send again.
                if response is not None:
                    try:
                        self.record_response(attempt, response)
                    except LedgerApiError:
                        pass
                error.unreported = dict(key=key, outcome=outcome, epoch=epoch, attempt_id=attempt,
                                        receipt=receipt, evidence=evidence, response=response)
                raise
            return dict(status=outcome, key=key, epoch=epoch, receipt=receipt, evidence=evidence)

        try:
            raw = call(ctx)
        except ProviderRejected as error:
            return settle("failed", evidence=dict(error.evidence, error=str(error)))
        except CallFailure as error:
            status = "failed" if error.sent == "no" else "unknown"
            return settle(status, evidence={"error": str(error), "providerSent": error.sent})
        except Exception as error:  # noqa: BLE001 - anything else is ambiguous (S4)
            return settle("unknown", evidence={"error": "%s: %s" % (type(error).__name__, error)})
        try:
            verdict, detail = classify(raw)
        except Exception as error:  # noqa: BLE001 - never lose the raw response (R1)
            return settle("unknown", evidence={"error": str(error), "why": "the response could not be classified"},
                          response=raw)
        if verdict == "done":
            return settle("done", receipt=detail, response=raw)
        return settle(verdict, evidence=detail, response=raw)

    # -- transport -----------------------------------------------------------------------------
    def _request(self, method, path, body=None):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"authorization": "Bearer " + self.runtime_key, "accept": "application/json"}
        if method == "POST":
            headers["content-type"] = "application/json"
            headers["idempotency-key"] = str(uuid.uuid4())  # the same key for every retry of this call
        attempt, in_progress_since = -1, None
        while True:
            attempt += 1
            request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
            try:
                with _OPENER.open(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8") or "null")
            except urllib.error.HTTPError as error:
                if 300 <= error.code < 400:
                    raise LedgerApiError(error.code, "http_error", "the ledger answered a redirect to %s; set base_url "
                                         "to that address (the runtime key is never sent to a redirect)"
                                         % error.headers.get("location")) from None
                problem = _problem(error)
                in_progress = error.code == 409 and problem.details.get("idempotency") == "in_progress"
                if in_progress:
                    in_progress_since = in_progress_since or time.monotonic()
                    if time.monotonic() - in_progress_since < self.in_progress_wait:
                        self._pause(min(attempt, self.retries), error.headers.get("retry-after"))
                        continue
                retry = error.code in RETRY_STATUSES or in_progress
                if not retry or attempt >= self.retries:
                    raise problem from None
                self._pause(attempt, error.headers.get("retry-after"))
            except (socket.timeout, TimeoutError) as error:
                if attempt >= self.retries:
                    raise LedgerApiError(0, "timeout", "no answer within %ss: %s" % (self.timeout, error)) from None
                self._pause(attempt, None)
            except (urllib.error.URLError, ConnectionError, OSError) as error:
                if attempt >= self.retries:
                    raise LedgerApiError(0, "network", "cannot reach %s: %s" % (self.base, error)) from None
                self._pause(attempt, None)

    def _pause(self, attempt, retry_after):
        """Exponential backoff with full jitter, or the server's Retry-After when it names one."""
        wait = random.uniform(0, min(self.max_backoff, self.backoff * 2 ** attempt))
        if retry_after:
            try:
                wait = max(wait, float(retry_after))
            except ValueError:
                try:
                    wait = max(wait, parsedate_to_datetime(retry_after).timestamp() - time.time())
                except (TypeError, ValueError):
                    pass
        time.sleep(min(wait, self.max_backoff * 4))


# What the ledger stores of one raw response (R1), as the TypeScript SDK's RAW_LIMITS: a larger one
# is cut and the cut said in an added header pair; sent whole, the report would be refused (422)
# and the outcome lost. The classification has already seen the whole response.
RAW_LIMITS = {"body_bytes": 1024 * 1024, "headers": 500, "name_length": 1024, "value_length": 16384}


def _raw_json(response):
    cuts, body, headers = [], response.body, [[k, v] for k, v in response.headers]
    if len(body) > RAW_LIMITS["body_bytes"]:
        cuts.append("body of %d bytes, the first %d kept" % (len(body), RAW_LIMITS["body_bytes"]))
        body = body[:RAW_LIMITS["body_bytes"]]
    if any(len(k) > RAW_LIMITS["name_length"] or len(v) > RAW_LIMITS["value_length"] for k, v in headers):
        cuts.append("long header names or values shortened")
        headers = [[k[:RAW_LIMITS["name_length"]], v[:RAW_LIMITS["value_length"]]] for k, v in headers]
    if len(headers) + (1 if cuts else 0) > RAW_LIMITS["headers"]:
        cuts.append("%d header pairs, the first %d kept" % (len(response.headers), RAW_LIMITS["headers"] - 1))
        headers = headers[:RAW_LIMITS["headers"] - 1]
    if cuts:
        headers.append(["x-effect-ledger-cut", "; ".join(cuts)])
    return {"status": response.status, "headers": headers, "bodyBase64": b64encode(body).decode("ascii")}


def _problem(error):
    try:
        body = json.loads(error.read().decode("utf-8"))
    except ValueError:
        body = {}
    known = ("type", "title", "status", "detail", "code", "field")
    details = {k: v for k, v in body.items() if k not in known} if isinstance(body, dict) else {}
    body = body if isinstance(body, dict) else {}
    return LedgerApiError(error.code, body.get("code", "http_error"), body.get("detail", "HTTP %d" % error.code),
                          body.get("field"), details)
