"""The ledger: a hash chain of what the product did that matters later (docs/ledger.md).

Below the outbox in the concerns' chain (api -> desk -> alerts -> outbox -> ledger): every concern
that decides, publishes or records appends here, and the ledger imports only the models.
"""
