"""Serve several views' methods on one URL pattern."""
from rest_framework.views import APIView


def combine(*views: type[APIView]) -> type[APIView]:
    """One view class with every handler of `views` (the first that defines a method wins) and their
    operation_ids merged, e.g. combine(SessionMessagesView, PromptView) for GET+POST /session/{id}/message."""
    operation_ids: dict = {}
    for view in views:
        for method, operation in getattr(view, "operation_ids", {}).items():
            operation_ids.setdefault(method, operation)
    name = "".join(view.__name__.removesuffix("View") for view in views) + "View"
    return type(name, tuple(views), {"operation_ids": operation_ids})
