"""kiln on Ray Serve: each replica holds one ContinuousBatchingPipeline (kiln's Python package, on
every node's Python path), Ray Serve spreads requests over the replicas and adds or removes
replicas with the queue.

    serve run kiln_deployment:build_app models_path=/models/llama-3.2-1b-int4 [device=CPU]

POST / with a JSON body {"prompt": "...", "max_new_tokens": 64, ...}: every other field is a
GenerationConfig field. The answer is {"text", "token_ids", "finish_reason", "replica"}; with
"stream": true it is the text as it is generated (text/plain, chunked). A field that is no
GenerationConfig field, or a bad value, is a 400 naming it. A client that goes away cancels its
request, which frees its KV cache.

Autoscaling is Ray Serve's, on the ongoing requests of each replica: the requests its pipeline
holds, running or waiting for their turn, i.e. its queue. A new replica loads its model first, so
scaling down waits long. Each replica is an actor of `num_cpus` CPUs; on a server with several
sockets give each replica one socket's cores (docs/DEPLOY.md).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import AsyncIterator

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

import kiln

AUTOSCALING = {
    "min_replicas": 1,
    "max_replicas": 4,
    # Requests in a replica's pipeline (running or waiting) that Ray Serve aims for.
    "target_ongoing_requests": 8,
    "upscale_delay_s": 10,
    "downscale_delay_s": 300,
}


@serve.deployment(autoscaling_config=AUTOSCALING, max_ongoing_requests=64)
class KilnDeployment:
    def __init__(self, models_path: str, device: str = "CPU", max_num_seqs: int = 64, **properties):
        scheduler = kiln.SchedulerConfig(max_num_seqs=max_num_seqs)
        self.pipe = kiln.ContinuousBatchingPipeline(models_path, scheduler, device, **properties)
        self.request_ids = itertools.count()
        self.replica = serve.get_replica_context().replica_id.unique_id

    async def __call__(self, request: Request) -> Response:
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("prompt"), str):
                raise ValueError('the body must be a JSON object with a "prompt" string')
            prompt, stream = body.pop("prompt"), bool(body.pop("stream", False))
            config = kiln.GenerationConfig(**body)
            handle = self.pipe.add_request(next(self.request_ids), prompt, config)
        except (TypeError, ValueError, RuntimeError) as e:
            return JSONResponse({"error": f"{type(e).__name__}: {e}"}, status_code=400)
        if stream:
            return StreamingResponse(self._stream(handle), media_type="text/plain; charset=utf-8")
        try:
            # read_all() waits with the GIL released; on a thread it leaves the event loop free.
            outputs = await asyncio.to_thread(handle.read_all)
        except asyncio.CancelledError:  # the client went away
            handle.cancel()
            raise
        if handle.get_status() == kiln.GenerationStatus.FAILED:
            return JSONResponse({"error": handle.error()}, status_code=500)
        first = outputs[0]
        return JSONResponse({"text": first.text, "token_ids": first.generated_ids,
                             "finish_reason": first.finish_reason.name, "replica": self.replica})

    @staticmethod
    async def _stream(handle: kiln.GenerationHandle) -> AsyncIterator[str]:
        try:
            while pieces := await asyncio.to_thread(handle.read):  # empty once the request ended
                if text := pieces[0].text:
                    yield text
        finally:  # ended, or the client went away (cancelling does nothing to an ended request)
            handle.cancel()


def build_app(args: dict[str, str]) -> serve.Application:
    """`serve run kiln_deployment:build_app models_path=DIR [device=CPU] [max_num_seqs=64]`."""
    return KilnDeployment.bind(args["models_path"], args.get("device", "CPU"), int(args.get("max_num_seqs", 64)))
