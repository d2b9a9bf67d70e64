"""Signing in and out: with a password, through single sign-on, and the admin's own login page."""

from django.contrib.auth import views as auth_views
from django.urls import path

from reviewer.accounts import views

urlpatterns = [
    path("accounts/login/", views.login, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("sso/start/", views.sso_start, name="sso_start"),
    path("sso/callback/", views.sso_callback, name="sso_callback"),
    path("admin/login/", views.admin_login),  # included before the admin's own: refused while passwords are off
]
