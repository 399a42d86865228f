"""An agent that sends a welcome to three recipients and is killed (SIGKILL, by itself) right after
the provider accepted the second, before it could report: what a crash half-way through a run is."""

import os
import signal
import sys

from effect_ledger import Ledger
from support import LEDGER_KEY, LEDGER_URL, TOOL, send_email

run_id, recipients = sys.argv[1], sys.argv[2:]
ledger = Ledger(LEDGER_URL, LEDGER_KEY)
for index, email in enumerate(recipients):
    call = send_email(email, "Welcome aboard", "Hello!")

    def sent_then_die(ctx, call=call, index=index):
        raw = call(ctx)
        if index == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return raw

    ledger.effect(run_id, TOOL, "campaign_welcome", "cust-%d" % index, email, sent_then_die)
