"""Logging in: with a username and password (unless LOCAL_LOGIN is off), and through the identity
provider when single sign-on is configured (:mod:`reviewer.accounts.sso`)."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from reviewer.accounts.lockout import forget_sso_failures
from reviewer.accounts.sso import callback_url

LOCAL_LOGIN_OFF = "Logging in with a username and password is turned off here: sign in with {provider}."


def login_context(request) -> dict:
    return {"sso_enabled": settings.SSO_ENABLED, "sso_provider": settings.SSO_PROVIDER_NAME,
            "local_login": settings.LOCAL_LOGIN, "sso_failed": request.GET.get("sso") == "failed"}


def refuse_password(request):
    """403 with the login page, which offers single sign-on only: a password is not even checked."""
    message = LOCAL_LOGIN_OFF.format(provider=settings.SSO_PROVIDER_NAME)
    return render(request, "registration/login.html", {**login_context(request), "refused": message}, status=403)


def login(request):
    if request.method == "POST" and not settings.LOCAL_LOGIN:
        return refuse_password(request)
    return auth_views.LoginView.as_view(extra_context=login_context(request))(request)


def admin_login(request):
    """The admin site's login: the product's own login page while passwords are turned off."""
    if settings.LOCAL_LOGIN:
        return admin.site.login(request)
    if request.method == "POST":
        return refuse_password(request)
    return redirect(f"{reverse('login')}?{urlencode({'next': request.GET.get('next') or reverse('admin:index')})}")


class SsoStart(OIDCAuthenticationRequestView):
    """Sends the browser to the provider (state, nonce and a PKCE challenge kept in the session)."""

    def dispatch(self, request, *args, **kwargs):
        if not settings.SSO_ENABLED:
            raise Http404("Single sign-on is not configured.")
        return super().dispatch(request, *args, **kwargs)

    def get_extra_params(self, request):
        return {"redirect_uri": callback_url()}


class SsoCallback(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: the code is exchanged, the roles applied (reviewer.accounts.sso)."""

    def dispatch(self, request, *args, **kwargs):
        if not settings.SSO_ENABLED:
            raise Http404("Single sign-on is not configured.")
        return super().dispatch(request, *args, **kwargs)

    def login_success(self):
        forget_sso_failures(self.request)  # before logging in changes the session key
        return super().login_success()


sso_start = SsoStart.as_view()
sso_callback = SsoCallback.as_view()
