"""Admin for the routing specialists' data: business rows, not policy, so plain admins (no change
record)."""

from django.contrib import admin

from agents.admin.base import LabelledTabularInline
from agents.models import Customer, Payment, Plan, ServiceIncident


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ("code", "price", "currency", "period", "recommended")
    list_filter = ("recommended", "currency")


class PaymentInline(LabelledTabularInline):
    model = Payment
    extra = 0


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ("user_id", "name", "country", "plan")
    list_filter = ("plan", "country")
    search_fields = ("=user_id", "name")
    inlines = [PaymentInline]


@admin.register(ServiceIncident)
class ServiceIncidentAdmin(admin.ModelAdmin):
    list_display = ("incident_id", "service", "state", "next_update_minutes", "updated_at")
    list_filter = ("state", "service")
    search_fields = ("incident_id", "service")
