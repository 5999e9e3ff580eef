#!/usr/bin/env python3
"""Renders kiln's own Jinja template cases with Python Jinja2 and records the results.

Developer tool (not run by CI). Needs PyPI jinja2 (3.1.x):
    .venv/bin/pip install jinja2
    .venv/bin/python tools/jinja/make_goldens.py      # rewrites tests/data/jinja/template_goldens.jsonl

The environment is the one transformers' apply_chat_template compiles chat templates with:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension, transformers' tojson filter, and the raise_exception and strftime_now globals. The
clock is fixed at 2026-12-02 13:00:00, as in the shared chat-template fixtures.

The first output line is {"base_context": {...}}; each further line is one case: {"name",
"template", optionally "context" (replacing the base context), and "rendered" or "error"}, where
"error" is "<Python exception type>: <message>". kiln's test (tests/tokenizer/jinja/) renders
every case and must produce exactly the same string or error.
"""
import json
import pathlib
import random
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "tests" / "data" / "jinja" / "template_goldens.jsonl"
FIXED_NOW = datetime(2026, 12, 2, 13, 0, 0)


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
    return env


# The context every case sees, unless it brings its own.
BASE_CONTEXT = {
    "name": "World",
    "n": 5,
    "f": 2.5,
    "neg": -7,
    "s": "  Hello, World!  ",
    "empty": "",
    "nothing": None,
    "yes": True,
    "no": False,
    "items": [3, 1, 2],
    "words": ["banana", "Apple", "cherry", "apple"],
    "nested": [[1, 2], [3, 4]],
    "user": {"name": "Ada", "age": 36, "tags": ["math", "code"], "address": {"city": "London"}},
    "users": [
        {"name": "Ada", "age": 36, "active": True},
        {"name": "Bob", "age": 25, "active": False},
        {"name": "cy", "age": 25, "active": True, "email": None},
    ],
    "unicode": "Grüße, 世界! 👋",
    "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Hi <there> & 'friends'"},
        {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello!"},
        {"role": "user", "content": "Weather?"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get weather",
                                                 "parameters": {"type": "object", "properties": {
                                                     "city": {"type": "string"}}, "required": ["city"]}}}],
}

CASES = [
    # ---- output, literals, whitespace control ----
    ("text_only", "Just text.\n"),
    ("print_name", "Hello {{ name }}!"),
    ("literals", "{{ 1 }} {{ -2 }} {{ 1.5 }} {{ 1e3 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 'a' 'b' }} {{ true }} {{ False }} {{ none }} {{ None }}"),
    ("float_repr", "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e-5 }} {{ 123456789012345678.0 }} {{ 1/3 }} {{ 2.0 }} {{ -0.0 }} {{ 1e300 * 1e10 }} {{ 0.0001 }} {{ 100.0 / 3 }}"),
    ("string_escapes", "{{ 'tab\\there' }}|{{ \"q\\\"uote\" }}|{{ 'new\\nline' }}|{{ '\\x41\\u00e9\\U0001F600' }}|{{ '\\101' }}|{{ 'back\\\\slash' }}|{{ 'keep\\d' }}"),
    ("list_repr", "{{ [1, 'a', none, true, 1.5, [2], {'k': (1,)}] }}"),
    ("dict_repr", "{{ {'a': 1, 'b': [1, 2], 3: 'x', none: 1.0} }}"),
    ("tuple_repr", "{{ (1,) }} {{ () }} {{ (1, 'two') }}"),
    ("repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', '\\n\\t\\x01'] }}"),
    ("repr_unicode", "{{ [unicode, 'a\\u200bb', '\\x7f', '\\u00a0'] }}"),
    ("trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter"),
    ("lstrip_blocks", "  {% if true %}\n    x\n  {% endif %}\n  end"),
    ("lstrip_not_variable", "  {{ name }}\n  {% if true %}y{% endif %}"),
    ("strip_minus", "a   {%- if true -%}   b   {%- endif -%}   c"),
    ("strip_minus_var", "a \n {{- name -}} \n b"),
    ("plus_disables_lstrip", "  {%+ if true %}x{% endif %}"),
    ("plus_disables_trim", "{% if true +%}\nx{% endif %}"),
    ("comment", "a {# comment #} b\n  {# own line #}\nc {#- strip -#}   d"),
    ("comment_trim", "x\n{# c #}\ny"),
    ("raw_block", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}!"),
    ("raw_block_ws", "a\n  {% raw %}\n  {{ x }}\n  {% endraw %}\nb"),
    ("raw_minus", "a  {%- raw -%}  inner  {%- endraw -%}  b"),
    ("trailing_newline", "line\n"),
    ("two_trailing_newlines", "line\n\n"),
    ("crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc"),
    ("print_tag", "{% print 'a', 1 %}"),
    ("nested_braces", "{{ {'a': {'b': 1}} }}"),
    # ---- expressions ----
    ("arithmetic", "{{ 7 + 3 }} {{ 7 - 10 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }} {{ 7.5 % -2 }}"),
    ("precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ not true or true }} {{ (1 + 2) ~ 3 }} {{ 10 - 2 - 3 }}"),
    ("precedence_concat_error", "{{ 1 + 2 ~ 3 }}"),
    ("bool_arith", "{{ true + 1 }} {{ true * 'ab' }} {{ 3 * 'ab' }} {{ [1] * 2 }} {{ 'x' * 0 }} {{ 'x' * -1 }}"),
    ("concat", "{{ 'a' ~ 1 ~ none ~ [1] ~ undefined_thing ~ 1.0 }}"),
    ("string_plus", "{{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }}"),
    ("comparisons", "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 3 > 4 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 1 == 1.0 }} {{ 1 != 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ (1, 2) == (1, 2) }} {{ [1] == (1,) }}"),
    ("in_operator", "{{ 'ell' in 'hello' }} {{ 2 in [1, 2] }} {{ 'name' in user }} {{ 'x' not in user }} {{ 3 not in items }} {{ 'a' in undefined_thing }}"),
    ("logic_values", "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' or none }} {{ [] and 1 }} {{ not [] }} {{ not 'a' }}"),
    ("ternary", "{{ 'yes' if n > 3 else 'no' }} {{ 'a' if false }}|{{ 'x' if nothing is none else 'y' }}"),
    ("ternary_chain", "{{ 'a' if n == 1 else 'b' if n == 5 else 'c' }}"),
    ("attribute_access", "{{ user.name }} {{ user['age'] }} {{ user.address.city }} {{ user.tags[1] }} {{ nested[1][0] }} {{ nested.1.0 }} {{ user.missing }}|{{ user['missing'] }}|"),
    ("negative_index", "{{ items[-1] }} {{ words[-2] }} {{ 'abc'[-1] }} {{ items[10] }}|"),
    ("slicing", "{{ items[1:] }} {{ items[:2] }} {{ items[::-1] }} {{ items[::2] }} {{ 'hello'[1:4] }} {{ 'hello'[::-1] }} {{ items[-2:] }} {{ items[5:] }} {{ words[3:0:-1] }} {{ words[-1:-10:-2] }}"),
    ("slice_unicode", "{{ unicode[::-1] }}|{{ unicode[2:5] }}|{{ unicode[-1] }}"),
    ("messages_reverse", "{% for m in messages[::-1] %}{{ m.role }},{% endfor %}"),
    ("list_dict_literals", "{{ [1, 2,] }} {{ {'a': 1,} }} {{ [] }} {{ {} }} {{ [[]] }}"),
    ("dict_literal_keys", "{% set d = {1: 'int', 1.0: 'float', true: 'bool'} %}{{ d }}"),
    ("unary", "{{ -n }} {{ +n }} {{ - -n }} {{ -f }} {{ -(1) }}"),
    ("filter_precedence", "{{ -3|abs }} {{ 'a' ~ 'b'|upper }} {{ -2.5|round }}"),
    ("filter_precedence_error", "{{ 1 + 2|string }}"),
    ("call_kwargs", "{{ dict(a=1, b=2) }} {{ dict([('x', 1)], y=2) }} {{ dict(**{'k': 1}) }} {{ range(*[1, 4])|list }}"),
    # ---- undefined ----
    ("undefined_prints_empty", "[{{ missing }}][{{ user.missing }}][{{ items[7] }}]"),
    ("undefined_iter", "{% for x in missing %}x{% else %}empty{% endfor %}"),
    ("undefined_tests", "{{ missing is defined }} {{ missing is undefined }} {{ user.missing is defined }} {{ missing|default('d') }} {{ missing|length }} {{ missing == missing }}"),
    ("undefined_attr_error", "{{ missing.attr }}"),
    ("undefined_add_error", "{{ missing + 1 }}"),
    ("undefined_attr_of_attr", "{{ user.missing.deeper }}"),
    ("undefined_index_msg", "{{ items[9] + 1 }}"),
    ("undefined_call", "{{ missing() }}"),
    ("none_attr", "[{{ nothing.attr }}][{{ nothing[0] }}]"),
    ("undefined_in_list_repr", "{{ [missing] }}"),
    ("undefined_compare_error", "{{ missing < 1 }}"),
    # ---- if / for ----
    ("if_elif_else", "{% for v in [1, 2, 3] %}{% if v == 1 %}one{% elif v == 2 %}two{% else %}many{% endif %} {% endfor %}"),
    ("for_loop_vars", "{% for x in items %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }};{% endfor %}"),
    ("for_prev_next", "{% for x in items %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}"),
    ("for_cycle", "{% for x in items %}{{ loop.cycle('odd', 'even') }} {% endfor %}"),
    ("for_changed", "{% for x in [1, 1, 2, 2, 1] %}{{ loop.changed(x) }} {% endfor %}"),
    ("for_else", "{% for x in [] %}x{% else %}none{% endfor %}|{% for x in [1] %}x{% else %}none{% endfor %}"),
    ("for_filter", "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% endfor %}"),
    ("for_dict", "{% for k in user %}{{ k }},{% endfor %}"),
    ("for_items", "{% for k, v in user.items() %}{{ k }}={{ v }};{% endfor %}"),
    ("for_items_filter", "{% for k, v in user|items %}{{ k }};{% endfor %}{% for k, v in missing|items %}x{% endfor %}"),
    ("for_string", "{% for c in 'héllo' %}{{ c }}.{% endfor %}"),
    ("for_nested_loop", "{% for a in nested %}{% for b in a %}{{ loop.index }}{{ b }}{% endfor %}-{{ loop.index }} {% endfor %}"),
    ("for_break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
    ("for_scope", "{% set x = 'outer' %}{% for i in range(2) %}[{{ x }}]{% set x = i %}[{{ x }}]{% endfor %}{{ x }}"),
    ("for_var_does_not_leak", "{% set i = 'keep' %}{% for i in range(3) %}{% endfor %}{{ i }}"),
    ("if_set_leaks", "{% if true %}{% set y = 1 %}{% endif %}{{ y }}"),
    ("for_unpack", "{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }} {% endfor %}"),
    ("for_unpack_error", "{% for a, b in [[1]] %}{% endfor %}"),
    ("for_over_none", "{% for x in nothing %}{% endfor %}"),
    ("for_over_int", "{% for x in 5 %}{% endfor %}"),
    ("for_recursive", "{% for item in [{'n': 'a', 'c': [{'n': 'b', 'c': []}, {'n': 'c', 'c': [{'n': 'd', 'c': []}]}]}] recursive %}{{ item.n }}{{ loop.depth }}({{ loop(item.c) }}){% endfor %}"),
    ("loop_repr", "{% for x in items %}{{ loop }}{% endfor %}"),
    ("loop_missing_attr", "{% for x in [1] %}[{{ loop.nope }}]{% endfor %}"),
    ("loop_outside", "[{{ loop }}]"),
    ("loop_in_else", "{% for x in [] %}{% else %}[{{ loop }}]{% endfor %}"),
    ("nested_loop_outer", "{% for a in [1, 2] %}{% set outer = loop %}{% for b in [1] %}{{ outer.index }}{% endfor %}{% endfor %}"),
    # ---- set / namespace / with ----
    ("set_simple", "{% set a = 1 %}{% set b, c = 2, 3 %}{{ a }}{{ b }}{{ c }}"),
    ("set_tuple_literal", "{% set t = 1, 2 %}{{ t }}"),
    ("set_unpack_errors", "{% set a, b = [1, 2, 3] %}"),
    ("set_block", "{% set block %}Hi {{ name }}!{% endset %}[{{ block }}]"),
    ("set_block_filter", "{% set block | upper | trim %}  hi {{ name }}  {% endset %}[{{ block }}]"),
    ("namespace", "{% set ns = namespace(count=0, items=[]) %}{% for x in items %}{% set ns.count = ns.count + x %}{% endfor %}{{ ns.count }} {{ ns.items }} {{ ns }}"),
    ("namespace_from_dict", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns['a'] }}"),
    ("namespace_missing", "{% set ns = namespace() %}[{{ ns.x }}]{{ ns.x is defined }}"),
    ("namespace_missing_error", "{% set ns = namespace() %}{{ ns.x.y }}"),
    ("namespace_assign_non_ns", "{% set d = {} %}{% set d.x = 1 %}"),
    ("namespace_self_repr", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"),
    ("with_scope", "{% set x = 1 %}{% with %}{% set x = 2 %}{{ x }}{% endwith %}{{ x }}"),
    # ---- macros / call / filter blocks ----
    ("macro_basic", "{% macro greet(who, greeting='Hello') %}{{ greeting }}, {{ who }}!{% endmacro %}{{ greet('Ada') }} {{ greet('Bob', 'Hi') }} {{ greet(greeting='Yo', who='Cy') }}"),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}"),
    ("macro_default_uses_param", "{% macro m(a, b=a * 2) %}{{ a }},{{ b }}{% endmacro %}{{ m(3) }}"),
    ("macro_varargs_kwargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }}"),
    ("macro_too_many", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
    ("macro_bad_kwarg", "{% macro m(a) %}{% endmacro %}{{ m(b=1) }}"),
    ("macro_recursion", "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1)|int }}{% endif %}{% endmacro %}{{ fact(6) }}"),
    ("macro_closure_late", "{% macro m() %}{{ z }}{% endmacro %}{% set z = 3 %}{{ m() }}"),
    ("macro_no_caller_scope", "{% macro m() %}[{{ w }}]{% endmacro %}{% for w in [1] %}{{ m() }}{% endfor %}"),
    ("macro_in_loop", "{% for w in [1, 2] %}{% macro m() %}{{ w }}{% endmacro %}{{ m() }}{% endfor %}"),
    ("macro_local_set", "{% macro m() %}{{ z }}{% set z = 2 %}{{ z }}{% endmacro %}{% set z = 3 %}{{ m() }}{{ z }}"),
    ("macro_repr", "{% macro m() %}{% endmacro %}{{ m }} {{ m is callable }}"),
    ("macro_returns_string", "{% macro m() %}x{% endmacro %}{{ m() ~ m() }} {{ m()|length }} {{ m() is string }}"),
    ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ name }}{% endcall %}"),
    ("call_block_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x, loop.index) }}{% endfor %}{% endmacro %}{% call(v, i) each([10, 20]) %}{{ i }}:{{ v }} {% endcall %}"),
    ("call_without_caller_use", "{% macro m() %}m{% endmacro %}{% call m() %}body{% endcall %}"),
    ("caller_undefined", "{% macro m() %}[{{ caller }}]{% endmacro %}{{ m() }}"),
    ("filter_block", "{% filter upper %}hello {{ name }}{% endfilter %}|{% filter trim|replace('a', 'o') %}  banana  {% endfilter %}"),
    ("filter_block_scope", "{% filter trim %}{% set inner = 1 %}{{ inner }}{% endfilter %}[{{ inner }}]"),
    # ---- filters ----
    ("f_trim", "[{{ s|trim }}][{{ 'xxhixx'|trim('x') }}][{{ none|trim }}][{{ missing|trim }}]"),
    ("f_case", "{{ name|upper }} {{ name|lower }} {{ 'hello world'|capitalize }} {{ 'hELLO wORLD-foo (bar)'|title }} {{ unicode|upper }} {{ 'straße'|upper }}"),
    ("f_length", "{{ items|length }} {{ 'héllo'|length }} {{ user|count }} {{ missing|length }} {{ ''|length }}"),
    ("f_length_error", "{{ 5|length }}"),
    ("f_first_last", "{{ items|first }} {{ items|last }} {{ 'abc'|first }} {{ 'abc'|last }} {{ user|first }} [{{ []|first }}][{{ []|last }}]"),
    ("f_join", "{{ items|join(', ') }} {{ items|join }} {{ users|join(', ', attribute='name') }} {{ [1, none, 'a']|join('-') }}"),
    ("f_default", "{{ missing|default('dflt') }} {{ missing|d('d') }} {{ ''|default('empty') }} {{ ''|default('empty', true) }} {{ none|default('x') }} {{ 0|default(5, boolean=true) }}"),
    ("f_replace", "{{ 'hello'|replace('l', 'L') }} {{ 'aaaa'|replace('a', 'b', 2) }} {{ 123|replace('2', 'x') }}"),
    ("f_list_string", "{{ 'abc'|list }} {{ user|list }} {{ items|string }} {{ 1.5|string }} {{ (1, 2)|list }}"),
    ("f_int_float", "{{ '42'|int }} {{ '42.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ '0x1A'|int(0, 16) }} {{ '0b11'|int(base=2) }} {{ 3.99|int }} {{ true|int }} {{ '3.5'|float }} {{ 'x'|float }} {{ 2|float }} {{ ' 1_000 '|int }} {{ '-12'|int }}"),
    ("f_abs_round", "{{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 42.55|round(1, 'floor') }} {{ 42.51|round(1, 'ceil') }} {{ 7|round }} {{ 1234.5|round(-2) }}"),
    ("f_tojson", "{{ user|tojson }} {{ [1, 'é', none, true, 1.5]|tojson }} {{ 'quote\"s\\n'|tojson }}"),
    ("f_tojson_indent", "{{ user|tojson(indent=2) }}\n{{ [1, [2, {}], []]|tojson(indent=1) }}\n{{ {'a': 1}|tojson(indent='\\t') }}"),
    ("f_tojson_options", "{{ {'b': 1, 'a': [1, 2]}|tojson(sort_keys=true) }} {{ {'a': 1}|tojson(separators=(',', ':')) }} {{ 'é😀'|tojson(ensure_ascii=true) }} {{ {1: 2, 2.5: 1, true: 0, none: 3}|tojson }}"),
    ("f_tojson_floats", "{{ [0.1, 1e16, 1e-7, 2.0, 100.0]|tojson }}"),
    ("f_tojson_tool", "{{ tools[0]|tojson }}"),
    ("f_tojson_undefined", "{{ missing|tojson }}"),
    ("f_items", "{{ user|items|list }}"),
    ("f_items_error", "{{ items|items|list }}"),
    ("f_keys_values", "{{ user.keys()|list }} {{ user.values()|list|length }} {{ user.get('name') }} {{ user.get('nope', 'd') }} {{ user.get('nope') }}"),
    ("f_selectattr", "{{ users|selectattr('active')|map(attribute='name')|list }} {{ users|rejectattr('active')|map(attribute='name')|join }} {{ users|selectattr('age', 'equalto', 25)|list|length }} {{ users|selectattr('email', 'none')|list|length }} {{ users|selectattr('email', 'defined')|list|length }}"),
    ("f_selectattr_dotted", "{{ [user]|selectattr('address.city', '==', 'London')|list|length }}"),
    ("f_select_reject", "{{ [1, 2, 3, 4, 5]|select('odd')|list }} {{ [1, 2, 3, 4, 5]|reject('odd')|list }} {{ [0, 1, '', 'a', none]|select|list }} {{ [1, 5, 10]|select('greaterthan', 3)|list }} {{ [1, 2, 3]|select('divisibleby', 3)|list }} {{ ['a', 'b']|select('in', ['b'])|list }}"),
    ("f_select_none_input", "{{ nothing|selectattr('x')|list }} {{ missing|map('upper')|list }}"),
    ("f_map", "{{ words|map('upper')|list }} {{ users|map(attribute='age')|list }} {{ users|map(attribute='email', default='-')|list }} {{ [1.5, 2.5]|map('round')|list }} {{ ['a', 'b']|map('replace', 'a', 'z')|list }}"),
    ("f_generator_len_error", "{{ users|selectattr('active')|length }}"),
    ("f_generator_truthy", "{{ 'yes' if ([]|select) else 'no' }}"),
    ("f_generator_once", "{% set g = items|map('string') %}{{ g|join }}|{{ g|join }}"),
    ("f_generator_first", "{{ items|map('string')|first }}"),
    ("f_generator_last_error", "{{ items|map('string')|last }}"),
    ("f_sort", "{{ items|sort }} {{ words|sort }} {{ words|sort(case_sensitive=true) }} {{ words|sort(reverse=true) }} {{ users|sort(attribute='age')|map(attribute='name')|join }} {{ users|sort(attribute='age,name')|map(attribute='name')|join }}"),
    ("f_sort_error", "{{ [1, 'a']|sort }}"),
    ("f_unique", "{{ words|unique|list }} {{ words|unique(case_sensitive=true)|list }} {{ users|unique(attribute='age')|map(attribute='name')|list }}"),
    ("f_min_max_sum", "{{ items|min }} {{ items|max }} {{ words|min }} {{ words|max }} {{ users|max(attribute='age') }} {{ items|sum }} {{ users|sum(attribute='age') }} {{ [1.5, 2]|sum(start=10) }} [{{ []|min }}]"),
    ("f_reverse", "{{ 'abc'|reverse }} {{ items|reverse|list }} {{ (1, 2)|reverse|list }} {{ user|reverse|list }}"),
    ("f_batch_slice", "{{ range(7)|batch(3)|list }} {{ range(7)|batch(3, 'x')|list }} {{ range(7)|slice(3)|list }} {{ range(7)|slice(3, 0)|list }}"),
    ("f_dictsort", "{{ {'b': 1, 'A': 3, 'c': 2}|dictsort }} {{ {'b': 1, 'A': 3, 'c': 2}|dictsort(true) }} {{ {'b': 1, 'a': 3}|dictsort(by='value') }} {{ {'b': 1, 'a': 3}|dictsort(reverse=true) }}"),
    ("f_indent", "{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent('> ', blank=true) }}|{{ 'x\\n'|indent(first=true) }}"),
    ("f_center_truncate", "[{{ 'ab'|center(6) }}][{{ 'abc'|center(6) }}][{{ 'foo bar baz qux'|truncate(9) }}][{{ 'foo bar baz qux'|truncate(9, True) }}][{{ 'foo bar baz qux'|truncate(11) }}][{{ 'foo bar baz qux'|truncate(11, False, '...', 0) }}]"),
    ("f_wordcount", "{{ 'Hello, wide world! 世界'|wordcount }} {{ ''|wordcount }}"),
    ("f_format", "{{ '%s and %s'|format('a', 'b') }} {{ '%(x)s!'|format(x=1) }} {{ '%5.2f|%-4d|%04d|%x|%r'|format(3.14159, 7, 42, 255, 'q') }}"),
    ("f_escape_safe", "{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|escape }} {{ '<b>'|safe }} {{ ('<b>'|safe)|e }} {{ 5|e }} {{ '<x>'|forceescape }}"),
    ("markup_concat", "{{ '<'|safe + '<' }} {{ '<' + '>'|safe }} {{ ('<'|safe) ~ '<' }} {{ '<b>'|safe|upper }} {{ ('a'|safe + 'b') is escaped }}"),
    ("f_attr", "{{ user|attr('name') }}|{{ 'abc'|attr('upper') is callable }}|{{ none|attr('x') is defined }}"),
    ("f_unknown_in_if", "{% if false %}{{ x|no_such_filter }}{% endif %}ok"),
    ("f_unknown_runtime", "{% if true %}{{ x|no_such_filter }}{% endif %}"),
    ("f_unknown_compile", "{{ x|no_such_filter }}"),
    ("f_unknown_test_compile", "{{ x is no_such_test }}"),
    ("f_unknown_test_in_if", "{% if x is no_such_test %}{% endif %}"),
    ("f_chained", "{{ '  a,b , c '|trim|replace(' ', '')|upper }} {{ words|map('lower')|unique|sort|join('/') }}"),
    # ---- tests ----
    ("t_types", "{{ 1 is number }} {{ 1.5 is float }} {{ 1 is integer }} {{ true is integer }} {{ true is number }} {{ 'a' is string }} {{ user is mapping }} {{ items is sequence }} {{ 'a' is sequence }} {{ user is sequence }} {{ missing is sequence }} {{ 5 is iterable }} {{ 'a' is iterable }} {{ none is none }} {{ true is boolean }} {{ 1 is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }}"),
    ("t_numbers", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 3.0 is odd }}"),
    ("t_compare", "{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} {{ 2 is gt 1 }} {{ 2 is greaterthan 3 }} {{ 1 is lt 2 }} {{ 1 is lessthan 1 }} {{ 2 is ge 2 }} {{ 2 is le 1 }} {{ 'a' is in 'abc' }} {{ 2 is in [1, 2] }}"),
    ("t_case", "{{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aBc' is lower }} {{ '123' is lower }} {{ 'é' is lower }}"),
    ("t_not_and_or", "{{ missing is not defined }} {{ not missing is defined }} {{ 1 is number and 'a' is string }} {{ x is defined or y is defined }}"),
    ("t_sameas", "{{ none is sameas none }} {{ false is sameas false }} {{ 1 is sameas true }} {{ items is sameas items }}"),
    ("t_callable_escaped", "{{ range is callable }} {{ 1 is callable }} {{ 'a'.upper is callable }} {{ 'a' is escaped }} {{ 'a'|safe is escaped }}"),
    ("t_filter_test", "{{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }} {{ 'nope' is test }}"),
    # ---- methods ----
    ("m_startswith", "{{ name.startswith('Wo') }} {{ name.endswith('ld') }} {{ name.startswith(('x', 'W')) }} {{ name.startswith('or', 1) }} {{ name.endswith('or', 0, 3) }}"),
    ("m_strip", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ 'xyhixy'.strip('xy') }}][{{ '\\n\\tx\\n'.strip() }}][{{ 'aab'.lstrip('a') }}]"),
    ("m_split", "{{ 'a,b,,c'.split(',') }} {{ '  a  b c '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  a  b c '.split(none, 1) }} {{ '  a  b c '.rsplit(none, 1) }} {{ 'abc'.split('x') }} {{ ''.split() }} {{ ''.split(',') }}"),
    ("m_split_think", "{% set c = messages[2].content %}{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}"),
    ("m_splitlines", "{{ 'a\\nb\\r\\nc\\rd'.splitlines() }} {{ 'a\\nb\\n'.splitlines(true) }} {{ ''.splitlines() }}"),
    ("m_case", "{{ 'hello world'.title() }} {{ \"they're bill's\".title() }} {{ 'hELLO'.capitalize() }} {{ 'hELLO'.swapcase() }} {{ 'ABC'.lower() }} {{ 'abc'.upper() }} {{ 'ß'.casefold() }}"),
    ("m_find", "{{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.find('z') }} {{ 'hello'.index('e') }} {{ 'hello'.count('l') }} {{ 'héllo'.find('l') }} {{ 'aaaa'.count('aa') }} {{ 'abc'.count('') }} {{ 'hello'.find('l', 3) }}"),
    ("m_index_error", "{{ 'hello'.index('z') }}"),
    ("m_replace", "{{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '', 1) }} {{ 'abc'.replace('', '.') }}"),
    ("m_join", "{{ ', '.join(['a', 'b']) }} {{ ''.join('xyz') }} {{ '-'.join(user) }}"),
    ("m_join_error", "{{ ', '.join([1, 2]) }}"),
    ("m_predicates", "{{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'a1'.isalnum() }} {{ '  '.isspace() }} {{ ''.isspace() }} {{ 'Abc'.istitle() }} {{ 'abc'.islower() }} {{ 'ABC'.isupper() }} {{ '٣'.isdecimal() }} {{ 'x_1'.isidentifier() }}"),
    ("m_pad", "[{{ 'ab'.center(7, '*') }}][{{ 'ab'.ljust(5) }}][{{ 'ab'.rjust(5, '0') }}][{{ '42'.zfill(5) }}][{{ '-42'.zfill(5) }}]"),
    ("m_partition", "{{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }} {{ 'abc'.partition('x') }} {{ 'abc'.removeprefix('a') }} {{ 'abc'.removesuffix('c') }}"),
    ("m_format", "{{ '{} and {}'.format('a', 'b') }} {{ '{1}{0}'.format('a', 'b') }} {{ '{x}-{y!r}'.format(x=1, y='q') }} {{ '{:>5}|{:<5}|{:^5}|{:05.1f}|{:,}|{:x}|{:.3}'.format('a', 'b', 'c', 3.14159, 1234567, 255, 3.14159) }} {{ '{0[name]} {0[age]}'.format(user) }} {{ '{{}}'.format() }}"),
    ("m_format_error", "{{ '{} {}'.format(1) }}"),
    ("m_list_methods", "{{ items.index(1) }} {{ items.count(3) }} {{ words.index('cherry') }}"),
    ("m_list_index_error", "{{ items.index(99) }}"),
    ("m_dict_items_unpack", "{% for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}"),
    ("m_unknown", "[{{ 'abc'.nope }}][{{ items.nope }}][{{ user.nope }}]"),
    ("m_unknown_call", "{{ 'abc'.nope() }}"),
    # ---- sandbox ----
    ("sandbox_append", "{{ items.append(4) }}"),
    ("sandbox_pop", "{{ items.pop() }}"),
    ("sandbox_update", "{{ user.update({'a': 1}) }}"),
    ("sandbox_print_method", "[{{ items.append }}]"),
    ("sandbox_dunder", "{{ ''.__class__ }}"),
    ("sandbox_dunder_call", "{{ ''.__class__.__mro__ }}"),
    ("sandbox_range_too_big", "{{ range(200000)|length }}"),
    # ---- globals ----
    ("g_range", "{{ range(5)|list }} {{ range(2, 5)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }}"),
    ("g_range_errors", "{{ range(1.5) }}"),
    ("g_dict", "{{ dict(a=1) }} {{ dict({'x': 1}) }} {{ dict() }} {{ dict([['k', 'v']]) }}"),
    ("g_cycler_joiner", "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}{% set j = joiner('|') %}{% for x in items %}{{ j() }}{{ x }}{% endfor %}"),
    ("g_raise_exception", "{{ raise_exception('Bad role: ' ~ messages[0].role) }}"),
    ("g_strftime", "{{ strftime_now('%Y-%m-%d %H:%M:%S %A %d %B %Y %j %%') }}"),
    ("g_strftime_llama", "{{ strftime_now('%d %b %Y') }}"),
    # ---- type errors with Python's wording ----
    ("e_concat_dict", "{{ 'a' + {} }}"),
    ("e_int_plus_str", "{{ 1 + 'a' }}"),
    ("e_none_plus", "{{ none + 1 }}"),
    ("e_list_plus_tuple", "{{ [1] + (1,) }}"),
    ("e_div_zero", "{{ 1 / 0 }}"),
    ("e_floordiv_zero", "{{ 1 // 0 }}"),
    ("e_mod_zero", "{{ 1 % 0 }}"),
    ("e_float_div_zero", "{{ 1.0 / 0 }}"),
    ("e_neg_str", "{{ -'a' }}"),
    ("e_compare", "{{ 'a' < 1 }}"),
    ("e_in_string", "{{ 1 in 'abc' }}"),
    ("e_in_none", "{{ 1 in none }}"),
    ("e_mul_float", "{{ 'a' * 1.5 }}"),
    ("e_not_callable", "{{ name() }}"),
    ("e_unhashable", "{{ {[1]: 2} }}"),
    ("e_percent_args", "{{ '%s %s' % (1,) }}"),
    ("e_percent_extra", "{{ '%s' % (1, 2) }}"),
    ("e_percent_type", "{{ '%d' % 'x' }}"),
    ("percent_format", "{{ '%s=%d' % ('a', 5) }} {{ '%.2f' % 3.14159 }} {{ '%5s|%-5s|' % ('a', 'b') }} {{ '%(a)s' % {'a': 1} }} {{ '%s' % none }} {{ '%s' % [1] }} {{ '%%' % () }} {{ '%c%c' % (65, 'b') }} {{ '%e' % 12345.678 }} {{ '%g' % 0.00001 }} {{ '%+d % d' % (5, 5) }} {{ '%#x %#o' % (255, 8) }}"),
    # ---- syntax errors (Jinja2's wording) ----
    ("s_unclosed_if", "{% if true %}x"),
    ("s_unknown_tag", "{% foo %}"),
    ("s_wrong_end", "{% if x %}{% endfor %}"),
    ("s_expected_expr", "{{ }}"),
    ("s_unexpected_end", "{{ 1 + }}"),
    ("s_bad_char", "{{ 1 ! 2 }}"),
    ("s_unclosed_string", "{{ 'abc }}"),
    ("s_unbalanced", "{{ (1 }}"),
    ("s_unexpected_close", "{{ 1) }}"),
    ("s_assign_const", "{% set 1 = 2 %}"),
    ("s_missing_endfor", "{% for x in y %}"),
    ("s_chained_is", "{{ 1 is number is number }}"),
    ("s_is_integer", "{{ 1 is 2 }}"),
    ("s_comment_unclosed", "{# abc"),
    ("s_raw_unclosed", "{% raw %}abc"),
    ("s_dangling_tag", "{% for x in [1] %}{% endfor"),
    ("s_nested_mistake", "{% for x in y %}{% if x %}{% endfor %}{% endif %}"),
    ("s_default_order", "{% macro m(a=1, b) %}{% endmacro %}"),
    ("s_call_syntax", "{{ f(a=1, 2) }}"),
    ("s_tag_name_expected", "{% 'x' %}"),
    ("s_subscript", "{{ x.'a' }}"),
    ("float_repr_random", "{{ floats }}"),
    ("float_tojson_random", "{{ floats|tojson }} {{ floats|map('round', 3)|list }}"),
    # ---- edge cases found by fuzzing against Python Jinja2 ----
    ("slice_none_bounds", "{{ 'abc'[none:] }} {{ items[none:none:none] }} {{ items[true:] }}"),
    ("slice_dict_error", "{{ user[1:2] }}"),
    ("slice_int_error", "{{ n[1:] }}"),
    ("slice_none_error", "{{ nothing[1:] }}"),
    ("slice_index_type_error", "{{ items['a':] }}"),
    ("slice_undefined_error", "{{ missing[1:] }}"),
    ("m_format_index_brace", "[{{ '{0[}]}'.format(user) }}][{{ '{0[name]}'.format(user) }}]"),
    ("f_indent_undefined_width", "{{ 'x'|indent(missing) }}"),
    ("f_sort_reverse_int", "{{ items|sort(reverse=1) }} {{ items|sort(reverse=0) }} {{ {'b': 1, 'a': 2}|dictsort(reverse=1) }}"),
    ("f_sort_reverse_error", "{{ items|sort(reverse='x') }}"),
    ("f_dictsort_reverse_error", "{{ user|dictsort(reverse=none) }}"),
    ("comment_open_at_end", "a{#"),
    ("raw_open_at_end", "a{% raw %}"),
    ("sandbox_private_attrs", "[{{ ''._x }}][{{ ''.__x }}][{{ user._name }}][{{ user['_name'] }}]"),
    ("sandbox_private_call", "{{ ''.__x() }}"),
    ("percent_undefined", "[{{ '%s' % missing }}][{{ '%r' % missing }}]"),
    ("percent_mapping_like", "[{{ 'abc' % missing }}][{{ 'abc' % user }}][{{ 'abc' % items }}]"),
    ("percent_undefined_key", "{{ '%(a)s' % missing }}"),
    ("percent_list_key", "{{ '%(a)s' % items }}"),
    ("percent_undefined_d", "{{ '%d' % missing }}"),
    ("percent_undefined_f", "{{ '%.1f' % missing }}"),
    ("percent_undefined_x", "{{ '%x' % missing }}"),
    ("percent_undefined_c", "{{ '%c' % missing }}"),
    ("t_callable_undefined", "{{ missing is callable }} {{ none is callable }}"),
    ("s_for_trailing_comma", "{% for a, in [[1]] %}{{ a }}{% endfor %}"),
    ("for_unpack_recursive", "{% for a, b in [[1, 2]] recursive %}{{ a }}{{ b }}{% endfor %}"),
    ("s_lexer_error_after_parse_error", "{{ 1 + }} {{ 'abc"),
    ("s_lexer_error_reached", "{{ 1 }} {{ 'abc"),
    # ---- chat-template idioms ----
    ("chat_loop", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% if not loop.last %}\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"),
    ("chat_system_first", "{% if messages[0]['role'] == 'system' %}{% set sys = messages[0]['content'] %}{% set loop_messages = messages[1:] %}{% else %}{% set loop_messages = messages %}{% endif %}[{{ sys }}]{{ loop_messages|length }}"),
    ("chat_last_query", "{% set ns = namespace(idx=messages|length - 1) %}{% for m in messages[::-1] %}{% set index = (messages|length - 1) - loop.index0 %}{% if m.role == 'user' %}{% set ns.idx = index %}{% endif %}{% endfor %}{{ ns.idx }}"),
    ("chat_tool_json", "{% for tool in tools %}{{ tool.function.name }}:{{ tool.function.parameters|tojson }}{% endfor %}"),
    ("chat_content_trim", "{% for m in messages %}{{ m['content']|trim }}|{% endfor %}"),
    ("chat_roles_alternate", "{% for m in messages[1:] %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% endfor %}ok"),
]

def random_floats(count=400, seed=1234):
    """Floats across every branch of Python's repr: fixed and exponent notation, 1..17 digits."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.randrange(5)
        if kind == 0:
            out.append(rng.uniform(-1000, 1000))
        elif kind == 1:
            out.append(rng.random() * 10.0 ** rng.randint(-30, 30))
        elif kind == 2:
            out.append(float(rng.randint(-10**17, 10**17)))
        elif kind == 3:
            out.append(round(rng.uniform(-100, 100), rng.randint(0, 6)))
        else:
            out.append(rng.choice([1e16, 1e15, 9999999999999998.0, 1e-4, 9.999e-5, 5e-324, 1.7976931348623157e308, 0.5, 123456789.125]))
    return out


# Cases whose context differs from BASE_CONTEXT.
CONTEXTS = {
    "chat_loop": {"messages": BASE_CONTEXT["messages"], "add_generation_prompt": True},
    "float_repr_random": {"floats": random_floats()},
    "float_tojson_random": {"floats": random_floats()},
}


def render(env, template, context):
    try:
        return {"rendered": env.from_string(template).render(**context)}
    except Exception as e:  # noqa: BLE001 - every exception is part of the golden
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    env = make_env()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    names = set()
    with OUT.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"base_context": BASE_CONTEXT}, ensure_ascii=False) + "\n")
        for name, template in CASES:
            assert name not in names, f"duplicate case {name}"
            names.add(name)
            context = CONTEXTS.get(name, BASE_CONTEXT)
            record = {"name": name, "template": template}
            if name in CONTEXTS:
                record["context"] = context
            record.update(render(env, template, context))
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(CASES)} cases to {OUT.relative_to(ROOT)} with jinja2 {jinja2.__version__}")


if __name__ == "__main__":
    main()
