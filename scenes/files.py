"""Scene and MotionBenchMaker files: reading YAML/JSON text into plain data within the nesting and
size limits (see scene.py's format notes), with errors that name the file, the line and the limit."""

from __future__ import annotations

import errno
import json
import os
import re

import yaml


from simdplan.scenes.reading import SceneError

EXTENSIONS = (".yaml", ".yml", ".json")


# ----------------------------------------------------------------------------- parsing files

# Nesting and size limits: the size is checked before parsing, the nesting on the parser's event
# stream, before anything recurses over it. Python's parsers recurse once per
# level of nesting (a file thousands of levels deep ends in RecursionError, and libyaml's composer
# overruns the C stack), while real scenes are at most 5 levels deep (top level, obstacles, an
# obstacle, its vertices, a vertex) and the MotionBenchMaker file 7. YAML builds Python objects at
# about 2 s and 50 MB per MB of file even with libyaml; JSON parses in C at a small fraction of
# that. The shipped scenes are a few kB and the MotionBenchMaker file 2.4 MB of JSON: bulk data
# belongs in point-cloud and mesh files, which are read by numpy and trimesh.
MAX_NESTING = 32
MAX_YAML_BYTES = 4_000_000
MAX_JSON_BYTES = 64_000_000
_BULK_HINT = ("bulk data such as point clouds and large meshes belongs in .npy/.ply/.obj files that the scene "
              "references with file: (simdplan.scenes.save writes them so)")


def _make_yaml_loader(base, namespace=None):
    """A ``base`` (SafeLoader or libyaml's CSafeLoader) that reads ``1e-3`` as a float (YAML 1.1 wants
    ``1.0e-3``) and refuses duplicate and unhashable keys with a YAML error."""
    loader = type(f"Scene{base.__name__}", (base,), {"watches_events": False, **(namespace or {})})
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                        |[-+]?\.(?:inf|Inf|INF)
                        |\.(?:nan|NaN|NAN))$""", re.X),
        list("-+0123456789."))
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    loader.construct_object = _construct_object
    return loader


def _construct_object(loader, node, deep=False):
    """SafeConstructor.construct_object, with a value its tag cannot take (``!!int x``, a 5000-digit
    integer, ``2001-02-30``, ``!!timestamp x``) as a YAML error at the value instead of a bare
    ValueError (or AttributeError) from deep inside PyYAML."""
    try:
        return yaml.SafeLoader.construct_object(loader, node, deep)
    except yaml.YAMLError:
        raise
    except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        shown = f" {value!r}" if isinstance(value, str) and len(value) <= 40 else \
            f" of {len(value)} characters" if isinstance(value, str) else ""
        tag = node.tag.rsplit(":", 1)[-1] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
        why = f" ({exc})" if isinstance(exc, (ValueError, ArithmeticError)) else ""  # not PyYAML's internals
        raise yaml.constructor.ConstructorError(None, None, f"cannot read the value{shown} as {tag}{why}",
                                                node.start_mark) from None


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # a list or mapping as a key
            raise yaml.constructor.ConstructorError(None, None, "a key must be a plain value, not a list or "
                                                    "mapping", key_node.start_mark) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


def _get_watched_event(loader):
    event = yaml.SafeLoader.get_event(loader)
    if loader.nesting is not None:
        loader.nesting.see(event)
    return event


PyYamlLoader = _make_yaml_loader(yaml.SafeLoader, {"watches_events": True, "nesting": None,
                                                   "get_event": _get_watched_event})
# libyaml (C) reads a large scene about three times as fast as PyYAML's pure-Python parser; the
# objects are built by the same Python constructor either way, so both read a file the same.
LibYamlLoader = _make_yaml_loader(yaml.CSafeLoader) if getattr(yaml, "CSafeLoader", None) else None
YamlLoader = LibYamlLoader or PyYamlLoader


def _json_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    line_start = text.rfind("\n", 0, index) + 1
    return f"line {line}, column {index - line_start + 1}"


def _too_deep(path: str, where: str, what: str) -> SceneError:
    scene = what == "scene file"
    needs = "5 levels (a mesh's vertex rows)" if scene else "7 levels (a problem's obstacle positions)"
    hint = f"; {_BULK_HINT}" if scene else ""
    return SceneError(path, "", f"nested more than {MAX_NESTING} levels deep at {where}; a {what} needs at most "
                                f"{needs}, so this one is damaged or not a {what}{hint}")


# A JSON string (skipped whole, so brackets inside it do not count) or a bracket.
_JSON_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _check_json_nesting(path: str, text: str, what: str) -> None:
    """SceneError if ``text`` nests arrays/objects more than MAX_NESTING deep (json.loads recurses)."""
    depth = 0
    for m in _JSON_BRACKETS.finditer(text):
        c = text[m.start()]
        if c == "[" or c == "{":
            depth += 1
            if depth > MAX_NESTING:
                raise _too_deep(path, _line_column(text, m.start()), what)
        elif c == "]" or c == "}":
            depth -= 1


class _YamlNesting:
    """Watches a YAML event stream, in order: SceneError where collections nest more than
    MAX_NESTING deep, counting what aliases bring in, or where an alias refers to a collection that
    contains it (an endless nesting); and the composer's own errors (an undefined alias, a duplicate
    anchor, a second document) in PyYAML's words, so that whether the stream is watched ahead of
    composing (libyaml) or while composing (PyYAML), the first problem in the file is reported.
    Nothing recurses."""

    def __init__(self, path: str, what: str) -> None:
        self.path, self.what = path, what
        self.open_collections = []  # [anchor, height of its tallest child] per collection being read
        self.heights = {}  # anchor -> nesting height of the node it names (a scalar: 0)
        self.anchor_marks = {}
        self.documents = 0
        self.first_node_mark = None

    def see(self, event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise yaml.composer.ComposerError("expected a single document in the stream", self.first_node_mark,
                                                  "but found another document", event.start_mark)
            return
        if isinstance(event, yaml.NodeEvent) and self.first_node_mark is None:
            self.first_node_mark = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            self._alias(event)
            return
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.CollectionEndEvent):
            if anchor in self.anchor_marks:
                raise yaml.composer.ComposerError(f"found duplicate anchor {anchor!r}; first occurrence",
                                                  self.anchor_marks[anchor], "second occurrence", event.start_mark)
            self.anchor_marks[anchor] = event.start_mark
        if isinstance(event, yaml.CollectionStartEvent):
            if len(self.open_collections) >= MAX_NESTING:
                raise _too_deep(self.path, self._where(event), self.what)
            self.open_collections.append([event.anchor, 0])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, tallest_child = self.open_collections.pop()
            if anchor is not None:
                self.heights[anchor] = tallest_child + 1
            self._child(tallest_child + 1)
        elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            self.heights[event.anchor] = 0

    def _alias(self, event) -> None:
        if event.anchor not in self.anchor_marks:
            raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
        if event.anchor not in self.heights:  # defined, but its collection is still open: it contains the alias
            raise SceneError(self.path, "", f"malformed YAML at {self._where(event)}: alias *{event.anchor} refers "
                                            f"to a collection that contains it, which would nest without end")
        if len(self.open_collections) + self.heights[event.anchor] > MAX_NESTING:
            raise _too_deep(self.path, self._where(event), self.what)
        self._child(self.heights[event.anchor])

    def _child(self, height: int) -> None:
        if self.open_collections:
            self.open_collections[-1][1] = max(self.open_collections[-1][1], height)

    @staticmethod
    def _where(event) -> str:
        return f"line {event.start_mark.line + 1}, column {event.start_mark.column + 1}"


def _yaml_error(path: str, exc: yaml.YAMLError, text: str) -> SceneError:
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow, by its index
        return SceneError(path, "", f"malformed YAML at {_line_column(text, exc.position)}: character "
                                    f"U+{exc.character if isinstance(exc.character, int) else ord(exc.character):04X} "
                                    f"is not allowed in YAML text ({exc.reason})")
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:  # e.g. a duplicate's first occurrence
        context += f" at line {context_mark.line + 1}, column {context_mark.column + 1}"
    return SceneError(path, "", f"malformed YAML{where}: {problem}" + (f" ({context})" if context else ""))


def _parse_yaml(text: str, path: str, what: str, loader_class):
    nesting = _YamlNesting(path, what)
    if loader_class.watches_events:  # PyYAML's composer reads events one by one: watch them as it does
        loader = loader_class(text)
        loader.nesting = nesting
    else:  # libyaml composes in C (recursively): watch the events in a pass of their own first
        checker = loader_class(text)
        try:
            while checker.check_event():
                nesting.see(checker.get_event())
        finally:
            checker.dispose()
        loader = loader_class(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_data(path: str, what: str = "scene file"):
    """Parse a YAML (.yaml/.yml) or JSON (.json) file; clear errors for missing, malformed, too big
    (MAX_YAML_BYTES, MAX_JSON_BYTES) or too deeply nested (MAX_NESTING) files."""
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, f"{what} not found" + (
            " (shipped examples: simdplan.scenes.example(name))" if what == "scene file" else ""), path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS:
        raise SceneError(path, "", f"unknown {what} extension {ext or '(none)'!r}; use .yaml, .yml or .json")
    is_json = ext == ".json"
    limit = MAX_JSON_BYTES if is_json else MAX_YAML_BYTES
    with open(path, "rb") as f:
        raw = f.read(limit + 1)  # the size may change between a stat and the read: count what is read
    if len(raw) > limit:
        size = max(len(raw), os.path.getsize(path))
        kind = "JSON" if is_json else "YAML"
        other = "" if is_json else f", or write the scene as JSON (up to {MAX_JSON_BYTES // 10**6} MB)"
        raise SceneError(path, "", f"the file has {size:,} bytes, more than the {limit // 10**6} MB ({limit:,} bytes) "
                                   f"a {kind} {what} may have; {_BULK_HINT}{other}")
    try:
        # byte-order marks at the start, as some editors write one, are not content (libyaml and
        # PyYAML kept different numbers of a run of them as text)
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SceneError(path, "", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} "
                                   f"(offset {exc.start}) is not valid UTF-8; save the file as UTF-8") from None
    del raw
    if is_json:
        _check_json_nesting(path, text, what)
        try:
            return json.loads(text, object_pairs_hook=_json_pairs)
        except json.JSONDecodeError as exc:
            raise SceneError(path, "", f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise SceneError(path, "", f"malformed JSON: {exc}") from None
    try:
        return _parse_yaml(text, path, what, YamlLoader)
    except yaml.YAMLError as exc:
        error = exc
    if YamlLoader is not PyYamlLoader and not isinstance(error, yaml.constructor.ConstructorError):
        # libyaml words syntax errors its own way (and places some a column apart): report PyYAML's,
        # so that a file gets one message whichever parser is installed. Errors are rare and PyYAML
        # stops at the first one.
        try:
            _parse_yaml(text, path, what, PyYamlLoader)
        except yaml.YAMLError as exc:
            error = exc
    raise _yaml_error(path, error, text) from None
