"""Fixtures of the review desk's tests: the JSON API's test client with one user's token."""

import json

import pytest


class ApiClient:
    """The Django test client speaking JSON to /api/ with one user's API token."""

    def __init__(self, client, token: str):
        self.client, self.token = client, token

    def call(self, method: str, path: str, body=None, **headers):

        extra = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}
        extra.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()})
        data = None if body is None else json.dumps(body)
        return getattr(self.client, method)(f"/api{path}", data=data, content_type="application/json", **extra)

    def get(self, path, **headers):
        return self.call("get", path, **headers)

    def delete(self, path, **headers):
        return self.call("delete", path, **headers)

    def post(self, path, body=None, **headers):
        return self.call("post", path, body, **headers)

    def patch(self, path, body=None, **headers):
        return self.call("patch", path, body, **headers)

    def put(self, path, body=None, **headers):
        return self.call("put", path, body, **headers)


@pytest.fixture
def api(client, users):
    """``api("lead")``: an API client with a fresh token of that user."""
    from reviewer.models import ApiToken

    def for_user(name: str) -> ApiClient:
        _, token = ApiToken.issue(getattr(users, name), f"test token of {name}")
        return ApiClient(client, token)

    return for_user
