"""What the agents app's admin modules share."""

from django.contrib import admin


class LabelledTabularInline(admin.TabularInline):
    """A tabular inline whose inputs are named for screen readers: Django labels the columns only in
    the table header, so each input gets its column's label as ``aria-label`` (axe: "label")."""

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)

        class Labelled(formset.form):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                for field in self.fields.values():
                    field.widget.attrs.setdefault("aria-label", str(field.label))

        Labelled.__name__ = formset.form.__name__
        formset.form = Labelled
        return formset


class ReadOnlyMixin:
    """Records written by the product, never by hand: no add, change or delete in the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
