"""Streamers in every form openvino_genai accepts, what stopping does to the result, exceptions
raised in a streamer, Ctrl-C, and the GIL released while generating."""

from __future__ import annotations

import signal
import threading
import time

import pytest

import kiln
from conftest import MODEL_DIR, PROMPT, greedy, run_python


def test_a_callable_sees_the_whole_text_in_pieces(pipe):
    for returned in (None, False, kiln.StreamingStatus.RUNNING):
        pieces = []

        def streamer(piece, returned=returned):
            pieces.append(piece)
            return returned

        result = pipe.generate(PROMPT, greedy(30), streamer)
        assert pieces and "".join(pieces) == result.texts[0]


def test_true_or_stop_ends_the_answer_where_the_streamer_stopped(pipe):
    full = pipe.generate(PROMPT, greedy(30)).texts[0]
    for stop in (True, kiln.StreamingStatus.STOP, kiln.StreamingStatus.CANCEL):
        pieces = []

        def streamer(piece, stop=stop):
            pieces.append(piece)
            return stop

        result = pipe.generate(PROMPT, greedy(30), streamer)
        # Text pieces coalesce when the engine runs ahead of the streamer (on a busy machine the
        # first piece may hold the whole answer), so the streamer stops at its first: the answer
        # is what it saw, whatever that was, and ends by its word.
        assert len(pieces) == 1
        assert result.texts[0] == pieces[0] and full.startswith(result.texts[0])
        reason = kiln.GenerationFinishReason.CANCEL if stop == kiln.StreamingStatus.CANCEL else kiln.GenerationFinishReason.STOP
        assert result.finish_reasons == [reason]

    # A token streamer sees every token on its own: stopping at the third keeps exactly three.
    class StopAtThird(kiln.StreamerBase):
        def __init__(self):
            super().__init__()
            self.seen = 0

        def write(self, token):
            self.seen += 1
            return kiln.StreamingStatus.STOP if self.seen == 3 else kiln.StreamingStatus.RUNNING

    result = pipe.generate(PROMPT, greedy(30), StopAtThird())
    assert result.tokens[0] == pipe.generate(PROMPT, greedy(30)).tokens[0][:3]


def test_a_streamer_base_subclass_gets_every_token_and_one_end(pipe):
    class Tokens(kiln.StreamerBase):
        def __init__(self):
            super().__init__()
            self.tokens, self.ends = [], 0

        def write(self, token):
            self.tokens.append(token)
            return kiln.StreamingStatus.RUNNING

        def end(self):
            self.ends += 1

    streamer = Tokens()
    result = pipe.generate(PROMPT, greedy(30), streamer)
    assert streamer.tokens == result.tokens[0]
    assert streamer.ends == 1


def test_the_older_put_method_works_as_write(pipe):
    class Put(kiln.StreamerBase):
        def __init__(self):
            super().__init__()
            self.count = 0

        def put(self, token):
            self.count += 1
            return self.count == 4  # True stops

    result = pipe.generate(PROMPT, greedy(30), Put())
    assert len(result.tokens[0]) == 4


def test_an_exception_in_a_streamer_surfaces_in_the_caller_and_hurts_nothing(pipe):
    def failing(piece):
        raise ValueError("streamer broke")

    with pytest.raises(ValueError, match="streamer broke"):
        pipe.generate(PROMPT, greedy(30), failing)
    with pytest.raises(TypeError, match="StreamingStatus"):
        pipe.generate(PROMPT, greedy(30), lambda piece: "not a status")
    with pytest.raises(TypeError, match="streamer"):
        pipe.generate(PROMPT, greedy(30), 42)
    assert pipe.generate(PROMPT, greedy(30)).texts[0]


def test_a_streamer_needs_one_sequence(pipe):
    with pytest.raises(RuntimeError, match="single sequence"):
        pipe.generate(PROMPT, greedy(8, num_beams=2), lambda piece: None)


def test_other_python_threads_run_while_kiln_generates(pipe):
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = ticks
        # No streamer: the whole call runs in C++ with the GIL released.
        pipe.generate([PROMPT, PROMPT + " ", PROMPT + "  "], greedy(200, ignore_eos=True))
        during = ticks - before
    finally:
        stop.set()
        counter.join()
    assert during > 0


INTERRUPT_SCRIPT = f"""
import os, signal, sys, threading
import kiln
# The scalar reference device: slow enough that the generation is still running when the signal comes.
pipe = kiln.LLMPipeline({str(MODEL_DIR)!r}, "REFERENCE")
config = kiln.GenerationConfig(max_new_tokens=1000000, ignore_eos=True, apply_chat_template=False)
{{prepare}}
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    {{call}}
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
# The pipeline is whole afterwards.
print(len(pipe.generate("Q: What does mmap do?\\nA:", max_new_tokens=8, apply_chat_template=False).tokens[0]))
"""


CB = f'cb = kiln.ContinuousBatchingPipeline({str(MODEL_DIR)!r}, kiln.SchedulerConfig(), "REFERENCE")'


@pytest.mark.parametrize(
    "prepare,call",
    [
        ("", 'pipe.generate("Q:", config)'),
        ("", 'pipe.generate("Q:", config, lambda piece: None)'),
        ("", 'pipe.generate("word " * 450, config)'),  # in the prefill
        ("", 'pipe.generate(["Q:", "A:"], config)'),
        ("config.num_beams = 2", 'pipe.generate("Q:", config)'),
        (CB, 'cb.generate(["Q:", "A:"], config)'),
        (CB, 'cb.add_request(1, "Q:", config).read_all()'),
        (CB, "handle = cb.add_request(1, 'Q:', config)\n    while handle.read(): pass"),
    ],
    ids=["no streamer", "callable", "prefill", "batch", "beams", "batch on cb", "handle read_all", "handle read"],
)
def test_ctrl_c_stops_generation_with_keyboard_interrupt(prepare, call):
    done = run_python(INTERRUPT_SCRIPT.format(prepare=prepare, call=call), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["interrupted", "8"]
