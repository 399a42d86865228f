"""Shared pieces of the Python client's tests: the server the vitest wrapper started, the sandbox
provider's HTTP API, and a proxy in front of the ledger that misbehaves on purpose."""

import http.server
import json
import os
import threading
import time
import urllib.parse
import urllib.request

from effect_ledger import CallFailure, RawResponse

LEDGER_URL = os.environ["LEDGER_URL"]
LEDGER_KEY = os.environ["LEDGER_KEY"]
SANDBOX_URL = os.environ["SANDBOX_URL"]
TOOL = os.environ["LEDGER_TOOL"]
WORKFLOW = os.environ["LEDGER_WORKFLOW"]


def send_email(target, subject, body):
    """The provider call an agent makes: POST to the sandbox with the ledger's idempotency key."""

    def call(ctx):
        request = urllib.request.Request(
            SANDBOX_URL + "/v1/messages",
            data=json.dumps({"to": target, "subject": subject, "body": body}).encode("utf-8"),
            headers={"content-type": "application/json", "idempotency-key": ctx["idempotency_key"]},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return RawResponse(response.status, response.getheaders(), response.read())
        except ConnectionRefusedError as error:
            raise CallFailure(str(error), sent="no")

    return call


def deliveries(to=None):
    query = "?" + urllib.parse.urlencode({"to": to}) if to else ""
    with urllib.request.urlopen(SANDBOX_URL + "/_sandbox/deliveries" + query, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))["deliveries"]


class FlakyProxy:
    """Forwards to the ledger; ``script`` says what to do with the n-th request of a path: 'pass',
    'drop' (forward, then close without answering), 'in_progress' (409: the same request is still
    running) or an int status (answer it, with Retry-After: 1)."""

    def __init__(self, script):
        self.script = script
        self.seen = []  # (path, idempotency key, monotonic time)
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                proxy.seen.append((self.path, self.headers.get("idempotency-key"), time.monotonic()))
                n = sum(1 for p, _, _ in proxy.seen if p == self.path)
                plan = proxy.script.get(self.path, [])
                action = plan[n - 1] if n <= len(plan) else "pass"
                if action == "in_progress":
                    self.send_response(409)
                    self.send_header("retry-after", "0")
                    self.send_header("content-type", "application/problem+json")
                    self.end_headers()
                    self.wfile.write(b'{"code":"conflict","status":409,"idempotency":"in_progress"}')
                    return
                if isinstance(action, int):
                    self.send_response(action)
                    self.send_header("retry-after", "1")
                    self.send_header("content-type", "application/problem+json")
                    self.end_headers()
                    self.wfile.write(b'{"code":"unavailable","detail":"try later","status":%d}' % action)
                    return
                forwarded = urllib.request.Request(
                    LEDGER_URL + self.path, data=body, method="POST",
                    headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
                try:
                    with urllib.request.urlopen(forwarded, timeout=10) as upstream:
                        status, payload = upstream.status, upstream.read()
                except urllib.error.HTTPError as error:
                    status, payload = error.code, error.read()
                if action == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Elsewhere:
    """A server at another address: ``redirect_to`` set, it answers every request with a 302 there;
    otherwise it answers 200 {} and records the Authorization header of each request."""

    def __init__(self, redirect_to=None):
        self.authorizations = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                if redirect_to:
                    self.send_response(302)
                    self.send_header("location", redirect_to + self.path)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                recorder.authorizations.append(self.headers.get("authorization"))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = answer
            do_POST = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
