"""Sample surrogate answers from any OpenAI-compatible server (vLLM, Ollama, TGI, `transformers serve`, hosted APIs).

Through the `openai` client's chat completions:
- Prompt: the local sampler's short-answer system instruction and worked
  examples (core.surrogate.sampler_base.SYSTEM_PROMPT, FEW_SHOT) as messages, then the item's
  prompt; generation stops at the first newline (`stop=["\\n"]`) and the
  answer is the stripped text.
- K answers per prompt: one request with `n=K`; a server that returns fewer
  choices ignores `n` (transformers serve, some hosted APIs), so the missing
  answers are asked for by parallel single requests, and after the first such
  reply every request of the run is a single one.
- Concurrency: at most `concurrency` requests in flight (asyncio semaphore).
- Retries: the client's own, with exponential back-off on connection errors,
  timeouts, 408, 409, 429 and 5xx (`max_retries`); each request times out
  after `timeout` seconds. A request that still fails stops the run with an
  InputError that names the HTTP status or the kind of connection failure, never the remote body (a
  server's error text is no business of whoever started the job); the items finished so far are kept.
- Redirects are not followed (a 3xx reply is a failure like any other): the key goes only to the
  base URL the operator or `$ACTIVEGRADE_SAMPLING_SERVERS` named.
- Log-probabilities: asked for (`logprobs=True`); where the server returns
  them, `logprob` is the sum of the answer's token log-probabilities and
  `n_tokens` their count, as the local sampler writes them.
- Resuming: as core.surrogate.sample (core.surrogate.sampler_base): finished items are appended
  and flushed, a rerun samples only the items not complete in the output.
- The API key is read from the environment variable named by `api_key_env`
  and passed to the client only: never written, logged or shown. A server
  that needs no key gets the placeholder "EMPTY".
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.surrogate.sampler_base import FEW_SHOT, SYSTEM_PROMPT, Answer, Progress, check_settings, samples_file

NO_KEY = "EMPTY"


@dataclass(frozen=True)
class Server:
    """Where and how to ask: base URL (…/v1), model name, the environment variable holding the key."""

    api_base: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 5
    concurrency: int = 8


def check_server(server: Server) -> None:
    """Raise InputError for a server's options that cannot work, before any request."""
    if server.concurrency < 1 or server.timeout <= 0 or server.max_retries < 0:
        raise InputError(
            "concurrency must be at least 1, the timeout positive and the retries not negative",
            fix="e.g. --concurrency 8 --timeout 60 --retries 5",
        )


def messages_for(question: str) -> list[dict[str, str]]:
    """System instruction, worked examples as earlier turns, then the question."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for shot_question, shot_answer in FEW_SHOT:
        messages += [{"role": "user", "content": shot_question}, {"role": "assistant", "content": shot_answer}]
    return messages + [{"role": "user", "content": question}]


def answer_of(choice) -> Answer:
    """A chat completion choice as an Answer: its first line, stripped; log-probabilities when returned."""
    text = (choice.message.content or "").split("\n", 1)[0].strip()
    tokens = getattr(getattr(choice, "logprobs", None), "content", None)
    if not tokens:
        return Answer(text, None, None)
    return Answer(text, float(sum(t.logprob for t in tokens)), len(tokens))


def api_key(env: str | None) -> str:
    """The key from the named environment variable (InputError naming the variable, never its value)."""
    if not env:
        return NO_KEY
    value = os.environ.get(env)
    if not value:
        raise InputError(f"the environment variable {env} holding the API key is not set", fix=f"export {env}=...")
    return value


class _Asker:
    """K answers for one prompt at a time, `n` while the server honours it, single requests after."""

    def __init__(self, client, server: Server, *, k: int, temperature: float, max_tokens: int, seed: int) -> None:
        self.client, self.server = client, server
        self.k, self.temperature, self.max_tokens, self.seed = k, temperature, max_tokens, seed
        self.gate = asyncio.Semaphore(server.concurrency)
        self.n_works = k > 1

    async def _request(self, question: str, n: int, seed: int) -> list[Answer]:
        import openai

        options = {"n": n} if n > 1 else {}
        async with self.gate:
            try:
                reply = await self.client.chat.completions.create(
                    model=self.server.model,
                    messages=messages_for(question),
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    stop=["\n"],
                    logprobs=True,
                    seed=seed,
                    **options,
                )
            except openai.RateLimitError:
                raise InputError(
                    f"the server still limits the request rate after {self.server.max_retries} retries (HTTP 429)",
                    file=self.server.api_base,
                    fix=f"send fewer requests at once than {self.server.concurrency} (the concurrency: "
                    "--concurrency, or 'Requests at once' on the Projects page), or wait and rerun: the items "
                    "finished are kept",
                ) from None
            except openai.APIStatusError as error:
                raise InputError(
                    f"the server answered HTTP {error.status_code}",
                    file=self.server.api_base,
                    fix="check the server's URL, the model's name and the environment variable holding the key",
                ) from None
            except openai.APIConnectionError as error:
                raise InputError(
                    f"no answer from the server after {self.server.max_retries} retries ({type(error).__name__})",
                    file=self.server.api_base,
                    fix="check that the server runs and that its URL is the OpenAI-compatible one (ending in /v1)",
                ) from None
            except (ValueError, openai.APIResponseValidationError) as error:  # json.JSONDecodeError is a ValueError
                raise InputError(
                    f"the server's answer is not the JSON of an OpenAI chat completion ({error})"[:300],
                    file=self.server.api_base,
                    fix="check that the URL is the server's OpenAI-compatible API (ending in /v1), not another "
                    "service or a proxy's error page",
                ) from None
        return [answer_of(choice) for choice in reply.choices]

    async def answers(self, question: str, item_seed: int) -> list[Answer]:
        got: list[Answer] = []
        if self.n_works:
            got = await self._request(question, self.k, item_seed)
            if len(got) < self.k:
                self.n_works = False
        missing = self.k - len(got)
        singles = await asyncio.gather(*(self._request(question, 1, item_seed + 1 + j) for j in range(missing)))
        return (got + [a for answers in singles for a in answers])[: self.k]


def sample_pool_api(
    pool: pd.DataFrame,
    server: Server,
    out: str | os.PathLike,
    *,
    k: int = 10,
    temperature: float = 1.0,
    max_tokens: int = 32,
    seed: int = 0,
    surrogate: str | None = None,
    progress: Progress | None = None,
    client=None,
) -> int:
    """Sample K answers for every pool item not yet complete in `out` from the server; return how many items
    were sampled. `surrogate` names the model in the output (default: server.model). `client` replaces the
    openai.AsyncOpenAI made from `server` (tests of the recorded replies)."""
    check_settings(k=k, temperature=temperature, max_new_tokens=max_tokens, batch_size=1)
    check_server(server)
    key = api_key(server.api_key_env) if client is None else NO_KEY

    async def run(todo: list[tuple[str, str]], write) -> None:
        import openai

        own = client or openai.AsyncOpenAI(
            base_url=server.api_base,
            api_key=key,
            timeout=server.timeout,
            max_retries=server.max_retries,
            http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False),
        )
        asker = _Asker(own, server, k=k, temperature=temperature, max_tokens=max_tokens, seed=seed)

        async def one(position: int, item: str, prompt: str) -> tuple[str, list[Answer]]:
            return item, await asker.answers(prompt, seed * 1_000_003 + 7919 * position)

        tasks = [asyncio.ensure_future(one(p, item, prompt)) for p, (item, prompt) in enumerate(todo)]
        try:
            for next_done in asyncio.as_completed(tasks):
                write(*await next_done)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if client is None:
                await own.close()

    with samples_file(pool, out, k, surrogate or server.model, progress) as (todo, write):
        asyncio.run(run(todo, write))
    return len(todo)
