"""The routing specialists' data: plans, customers, their payments and the services' statuses that
the sales, billing and technical specialists look up to answer a ticket. Business rows, not policy;
``agents.store.DatabaseData`` serves them to the specialists."""

from __future__ import annotations

from django.db import models


class Plan(models.Model):
    code = models.CharField(max_length=50, unique=True, help_text="e.g. pro_monthly, free, team_plus")
    price = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    period = models.CharField(max_length=20, default="month")
    recommended = models.BooleanField(
        default=False, help_text="On: the plan the sales specialist recommends (one plan at most)."
    )

    class Meta:
        ordering = ["code"]
        constraints = [
            models.UniqueConstraint(
                fields=["recommended"], condition=models.Q(recommended=True),
                name="agents_one_recommended_plan",
                violation_error_message="Another plan is already the recommended one.",
            ),
        ]

    def __str__(self) -> str:
        return self.code


class Customer(models.Model):
    user_id = models.PositiveBigIntegerField(unique=True)
    name = models.CharField(max_length=200)
    country = models.CharField(max_length=2)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="customers")

    class Meta:
        ordering = ["user_id"]

    def __str__(self) -> str:
        return f"{self.name} (user_id={self.user_id})"


class Payment(models.Model):
    FIRST, RENEWAL = "first", "renewal"

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="payments")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    paid_at = models.DateField()
    kind = models.CharField(max_length=10, choices=[(FIRST, "first"), (RENEWAL, "renewal")])

    class Meta:
        ordering = ["customer", "paid_at"]
        indexes = [models.Index(fields=["customer", "paid_at"])]

    def __str__(self) -> str:
        return f"{self.customer} {self.kind} {self.amount} {self.currency} on {self.paid_at}"


class ServiceIncident(models.Model):
    """A service's status as the technical specialist looks it up to answer a ticket: the
    routing specialists' data, like plans and payments. It is not the product's incident (``Incident``,
    with facts and versions, which runs draft updates for), so admin calls it a service status."""

    CLOSED_STATES = ("resolved",)

    incident_id = models.CharField(
        "status id", max_length=32, unique=True,
        help_text="The status page's id, e.g. INC-4021, which the technical specialist quotes to a customer. "
        "Product incidents (with facts and runs) are under Incidents.",
    )
    service = models.CharField(max_length=100)
    state = models.CharField(
        max_length=20,
        choices=[(s, s) for s in ("investigating", "identified", "monitoring", "mitigated", "resolved")],
    )
    next_update_minutes = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["state", "updated_at"])]
        verbose_name = "service status (technical specialist)"
        verbose_name_plural = "service statuses (technical specialist)"

    def __str__(self) -> str:
        return self.incident_id

    def clean(self):
        self.incident_id = (self.incident_id or "").strip().upper()
