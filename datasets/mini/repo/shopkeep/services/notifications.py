"""Customer e-mails triggered by order events."""

import logging
from dataclasses import dataclass, field

from ..errors import NotFoundError
from ..utils.dates import utcnow
from ..utils.retry import retry_async

log = logging.getLogger(__name__)

SENDER = "orders@shopkeep.example"

TEMPLATES = {
    "order.paid": (
        "Your order {order_id} is confirmed",
        "Hi {name},\n\nthanks for your order! We received your payment of {total}.\n\n"
        "{lines}\n\nWe'll let you know as soon as it ships.\n",
    ),
    "order.shipped": (
        "Your order {order_id} is on its way",
        "Hi {name},\n\nyour order has shipped. Tracking number: {tracking}.\n",
    ),
    "order.cancelled": (
        "Your order {order_id} was cancelled",
        "Hi {name},\n\nyour order {order_id} was cancelled{reason}.\n"
        "Any payment will be refunded within 5 business days.\n",
    ),
}


@dataclass
class Message:
    to: str
    subject: str
    body: str
    sender: str = SENDER
    created_at: object = field(default_factory=utcnow)


class Outbox:
    """Collects messages; :meth:`deliver_all` hands them to a transport."""

    def __init__(self, transport=None):
        self.transport = transport
        self.pending = []
        self.sent = []

    def send(self, message):
        self.pending.append(message)

    @retry_async(max_attempts=3, retry_on=(ConnectionError,), base_delay=0.5)
    async def _deliver(self, message):
        await self.transport.deliver(message)

    async def deliver_all(self):
        """Deliver pending messages one by one; returns how many were sent."""
        delivered = 0
        while self.pending:
            message = self.pending[0]
            if self.transport is not None:
                await self._deliver(message)
            self.sent.append(self.pending.pop(0))
            delivered += 1
        return delivered


class Notifier:
    """Subscribes to order events and queues the matching e-mails."""

    class _Context(dict):
        """Format mapping that leaves unknown placeholders visible."""

        def __missing__(self, key):
            return "{" + key + "}"

    def __init__(self, bus, customers, outbox):
        self.customers = customers
        self.outbox = outbox
        bus.on("order.paid", self.on_paid)
        bus.on("order.shipped", self.on_shipped)
        bus.on("order.cancelled", self.on_cancelled)

    def render(self, event, **context):
        subject, body = TEMPLATES[event]
        values = self._Context(context)
        return subject.format_map(values), body.format_map(values)

    def _notify(self, event, order, **context):
        try:
            customer = self.customers.get(order.customer_id)
        except NotFoundError:
            log.warning("no customer %s for order %s", order.customer_id, order.id)
            return None
        subject, body = self.render(event, name=customer.display_name,
                                    order_id=order.id, **context)
        message = Message(customer.email, subject, body)
        self.outbox.send(message)
        return message

    def on_paid(self, order, quote, **_):
        lines = "\n".join(f"  {line.quantity} x {line.sku}  {line.total.format()}"
                          for line in order.lines)
        return self._notify("order.paid", order, total=quote.total.format(), lines=lines)

    def on_shipped(self, order, tracking, **_):
        return self._notify("order.shipped", order, tracking=tracking)

    def on_cancelled(self, order, reason="", **_):
        suffix = f" ({reason})" if reason else ""
        return self._notify("order.cancelled", order, reason=suffix)
