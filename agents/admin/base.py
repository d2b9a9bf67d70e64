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
