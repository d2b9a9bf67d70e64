"""The demo data (reviewer/demo.py): the payment incident is the context file, defined once."""

import json

from reviewer.demo import CONTEXT_FILE


def test_the_stored_payment_incident_has_the_context_files_facts(demo_data):
    expected = json.loads(CONTEXT_FILE.read_text())

    context = demo_data["inc_pay_2041"].context()

    assert {**context, "report_date": expected["report_date"]} == expected  # stored with today's date
