"""The Python client against a running ledger (started by tests/integration/python-client.test.ts).
Rule ids in the test names are the ones in docs/RULES.md."""

import base64
import os
import subprocess
import sys
import unittest
import uuid

from effect_ledger import Ledger, LedgerApiError
from support import LEDGER_KEY, LEDGER_URL, TOOL, WORKFLOW, Elsewhere, FlakyProxy, deliveries, send_email

HERE = os.path.dirname(os.path.abspath(__file__))


def new_run(ledger):
    return ledger.create_run(WORKFLOW, "evt-py-%s" % uuid.uuid4().hex)["runId"]


def to(address):
    return deliveries(address)


class EffectTest(unittest.TestCase):
    def setUp(self):
        self.ledger = Ledger(LEDGER_URL, LEDGER_KEY)

    def test_S1_K1_a_reworded_replay_is_the_same_effect_and_sends_nothing(self):
        run = new_run(self.ledger)
        email = "py-%s@example.com" % uuid.uuid4().hex[:8]
        first = self.ledger.effect(run, TOOL, "campaign_welcome", "cust-1", email, send_email(email, "Welcome", "Hi"))
        self.assertEqual(first["status"], "done")
        again = self.ledger.effect(run, TOOL, "campaign_welcome", "cust-1", email,
                                   send_email(email, "Welcome aboard, reworded", "Hello there"))
        self.assertEqual(again["status"], "skipped")
        self.assertEqual(again["key"], first["key"])
        self.assertEqual(len(to(email)), 1)
        target = [t for t in self.ledger.read_run(run)["targets"] if t["key"] == first["key"]][0]
        self.assertEqual((target["state"], target["receipt"]), ("done", first["receipt"]))

    def test_S1_S4_a_killed_agent_then_a_reworded_rerun_sends_each_recipient_once(self):
        run = new_run(self.ledger)
        tag = uuid.uuid4().hex[:8]
        recipients = ["crash-%s-%d@example.com" % (tag, i) for i in range(3)]
        child = subprocess.run([sys.executable, os.path.join(HERE, "crash_agent.py"), run] + recipients,
                               env=dict(os.environ), timeout=60)
        self.assertEqual(child.returncode, -9, "the agent kills itself after the second send")
        self.assertEqual([len(to(r)) for r in recipients], [1, 1, 0])
        results = [self.ledger.effect(run, TOOL, "campaign_welcome", "cust-%d" % i, r,
                                      send_email(r, "Welcome (sent again, reworded)", "Hi again"))
                   for i, r in enumerate(recipients)]
        self.assertEqual([r["status"] for r in results], ["skipped", "skipped", "done"])
        self.assertEqual([len(to(r)) for r in recipients], [1, 1, 1])
        states = {t["target"]: t["state"] for t in self.ledger.read_run(run)["targets"]}
        # The second was accepted by the provider but never reported: held, never done, never resent.
        self.assertEqual([states[r] for r in recipients], ["done", "pending", "done"])


class TransportTest(unittest.TestCase):
    def test_Z5_a_lost_answer_is_retried_with_the_same_idempotency_key_and_claims_once(self):
        proxy = FlakyProxy({"/api/v1/effects/claim": ["drop"]})
        try:
            ledger = Ledger(proxy.url, LEDGER_KEY, backoff=0.05)
            run = new_run(Ledger(LEDGER_URL, LEDGER_KEY))
            email = "lost-%s@example.com" % uuid.uuid4().hex[:8]
            result = ledger.effect(run, TOOL, "campaign_welcome", "c", email, send_email(email, "Hi", "Hi"))
        finally:
            proxy.close()
        claims = [s for s in proxy.seen if s[0] == "/api/v1/effects/claim"]
        self.assertEqual(len(claims), 2)
        self.assertEqual(claims[0][1], claims[1][1], "the retry carries the first attempt's Idempotency-Key")
        self.assertEqual(result["status"], "done")
        self.assertEqual(len(to(email)), 1)

    def test_503_and_429_are_retried_after_retry_after_with_the_same_key(self):
        proxy = FlakyProxy({"/api/v1/runs": [503, 429]})
        try:
            run = Ledger(proxy.url, LEDGER_KEY, backoff=0.01).create_run(WORKFLOW, "evt-%s" % uuid.uuid4().hex)
        finally:
            proxy.close()
        self.assertIn("runId", run)
        seen = [s for s in proxy.seen if s[0] == "/api/v1/runs"]
        self.assertEqual(len(seen), 3)
        self.assertEqual(len({s[1] for s in seen}), 1)
        self.assertGreaterEqual(seen[1][2] - seen[0][2], 0.95, "waited for Retry-After: 1")
        self.assertGreaterEqual(seen[2][2] - seen[1][2], 0.95)

    def test_typed_errors_validation_authentication_and_network_and_no_retry_on_422(self):
        proxy = FlakyProxy({})
        try:
            with self.assertRaises(LedgerApiError) as bad:
                Ledger(proxy.url, LEDGER_KEY).claim(str(uuid.uuid4()), TOOL, "campaign_welcome", "r", "not an email")
        finally:
            proxy.close()
        self.assertEqual(len(proxy.seen), 1, "a 4xx other than 429 is never retried")
        self.assertIn(bad.exception.status, (404, 422))
        with self.assertRaises(LedgerApiError) as unauthenticated:
            Ledger(LEDGER_URL, "elk_000000000000_" + "x" * 43).create_run(WORKFLOW, "evt-x")
        self.assertEqual((unauthenticated.exception.status, unauthenticated.exception.code), (401, "unauthenticated"))
        with self.assertRaises(LedgerApiError) as invalid:
            Ledger(LEDGER_URL, LEDGER_KEY).create_run("", "evt-y")
        self.assertEqual((invalid.exception.code, invalid.exception.field), ("validation", "workflow"))
        with self.assertRaises(LedgerApiError) as down:
            Ledger("http://127.0.0.1:9", LEDGER_KEY, retries=1, backoff=0.01).create_run(WORKFLOW, "evt-z")
        self.assertEqual(down.exception.code, "network")

    def test_502_and_504_from_a_proxy_are_retried_with_the_same_key(self):
        proxy = FlakyProxy({"/api/v1/runs": [502, 504]})
        try:
            run = Ledger(proxy.url, LEDGER_KEY, backoff=0.01).create_run(WORKFLOW, "evt-%s" % uuid.uuid4().hex)
        finally:
            proxy.close()
        self.assertIn("runId", run)
        seen = [s for s in proxy.seen if s[0] == "/api/v1/runs"]
        self.assertEqual(len(seen), 3)
        self.assertEqual(len({s[1] for s in seen}), 1)

    def test_Z5_in_progress_is_asked_again_with_the_same_key_past_the_usual_retries(self):
        proxy = FlakyProxy({"/api/v1/runs": ["in_progress"] * 6})
        try:
            run = Ledger(proxy.url, LEDGER_KEY, retries=2, backoff=0.01).create_run(WORKFLOW, "evt-%s" % uuid.uuid4().hex)
        finally:
            proxy.close()
        self.assertIn("runId", run)
        seen = [s for s in proxy.seen if s[0] == "/api/v1/runs"]
        self.assertEqual(len(seen), 7)
        self.assertEqual(len({s[1] for s in seen}), 1)

    def test_Z6_a_redirect_is_an_error_and_the_runtime_key_never_goes_to_another_address(self):
        elsewhere = Elsewhere()
        redirector = Elsewhere(redirect_to=elsewhere.url)
        try:
            with self.assertRaises(LedgerApiError) as redirected:
                Ledger(redirector.url, LEDGER_KEY, retries=0).read_run(str(uuid.uuid4()))
            with self.assertRaises(LedgerApiError):
                Ledger(redirector.url, LEDGER_KEY, retries=0).create_run(WORKFLOW, "evt-r")
        finally:
            redirector.close()
            elsewhere.close()
        self.assertEqual((redirected.exception.status, redirected.exception.code), (302, "http_error"))
        self.assertIn(elsewhere.url, redirected.exception.detail)
        self.assertEqual(elsewhere.authorizations, [], "nothing reached the other address")

    def test_R1_a_report_the_ledger_did_not_take_still_leaves_the_raw_response_on_the_attempt(self):
        proxy = FlakyProxy({"/api/v1/effects/outcome": [400]})
        direct = Ledger(LEDGER_URL, LEDGER_KEY)
        email = "unreported-%s@example.com" % uuid.uuid4().hex[:8]
        try:
            with self.assertRaises(LedgerApiError) as failed:
                Ledger(proxy.url, LEDGER_KEY).effect(new_run(direct), TOOL, "campaign_welcome", "c", email,
                                                     send_email(email, "Hi", "Hi"))
        finally:
            proxy.close()
        unreported = failed.exception.unreported
        self.assertEqual((unreported["outcome"], bool(unreported["receipt"])), ("done", True))
        effect = direct.read_effect(unreported["key"])
        self.assertEqual(effect["state"], "pending", "the outcome itself never reached the ledger")
        self.assertIsNotNone(effect["response"], "the raw response was stored on the attempt")
        self.assertEqual(effect["response"]["status"], unreported["response"].status)
        self.assertEqual(len(to(email)), 1)


class WireTest(unittest.TestCase):
    def test_R1_an_answer_over_what_the_ledger_stores_is_cut_and_marked_not_refused(self):
        from effect_ledger import RawResponse, _raw_json
        headers = [("x-h%d" % i, "v") for i in range(600)]
        headers[0] = ("x-long", "y" * 20000)
        wire = _raw_json(RawResponse(201, headers, b"a" * (3 * 1024 * 1024)))
        self.assertEqual(len(base64.b64decode(wire["bodyBase64"])), 1024 * 1024)
        self.assertEqual(len(wire["headers"]), 500)
        self.assertTrue(all(len(v) <= 16384 for _, v in wire["headers"]))
        self.assertEqual(wire["headers"][-1][0], "x-effect-ledger-cut")
        self.assertIn("body of 3145728 bytes", wire["headers"][-1][1])
        small = _raw_json(RawResponse(200, [("a", "b")], b"ok"))
        self.assertEqual(small["headers"], [["a", "b"]])


if __name__ == "__main__":
    unittest.main()
