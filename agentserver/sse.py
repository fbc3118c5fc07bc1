"""SSE streams (to be written: see events.py)."""
from django.http import HttpResponse


async def global_event_stream(request):
    return HttpResponse(status=501)


async def instance_event_stream(request):
    return HttpResponse(status=501)


async def v2_event_stream(request):
    return HttpResponse(status=501)
