"""Requests steered to one host through the load balancer (the header the tests' nginx config maps)."""
from tests.hosts.cluster import STEER_HEADER


class Via:
    """alice's client, every request steered by nginx to one host (`via(alice, "b").post(...)`)."""

    def __init__(self, persona, host: str):
        self.persona = persona
        self.host = host
        self.headers = {STEER_HEADER: host}

    def request(self, method: str, url: str, **kw):
        headers = {**self.headers, **kw.pop("headers", {})}
        return self.persona.client.request(method, url, headers=headers, **kw)

    def get(self, url, **kw):
        return self.request("GET", url, **kw)

    def post(self, url, **kw):
        return self.request("POST", url, **kw)

    def put(self, url, **kw):
        return self.request("PUT", url, **kw)

    def patch(self, url, **kw):
        return self.request("PATCH", url, **kw)

    def delete(self, url, **kw):
        return self.request("DELETE", url, **kw)


def via(persona, host: str) -> Via:
    return Via(persona, host)
