"""The simulator's notification outbox, one for every simulated provider (docs/providers.md,
"How a simulator sends notifications").

A provider's move writes its notifications in the move's own transaction (``write.enqueue``);
once that committed they are handed to ``sender.send_after_commit``, which sends them in a task
detached from the answer (``payorch.detached``), with a few quick retries; the worker's pass
(``sender.deliver_due``) sends what is still due on a backoff schedule, under a lease, and gives
up after the last step. Only URLs of this service itself (PAYORCH_PUBLIC_URL's origin) are ever
written: the simulator never POSTs to other hosts. A provider declares only what is its own: the
body it writes and a ``Notifier`` (records.py) that signs each attempt.
"""
