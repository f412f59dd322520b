"""A small YAML reader and writer for dranet's packaging files (Python stdlib only).

Why hand-written: CI runs Debian's python3 without PyYAML, and Helm/kustomize are not
packaged in Debian, yet the manifests must be rendered and checked there. This covers the
subset the packaging files use and nothing more:

  read:  block mappings and sequences, `- key: value` items, plain / 'single' / "double"
         quoted scalars, flow collections (`{a: 1, b: [x, y]}`), `#` comments, `---`
         document separators, `|` literal blocks. Anchors, tags and `>` folding are refused
         with an error naming the line.
  write: dicts, lists, str, int, bool, None; strings are quoted whenever a YAML 1.1 or 1.2
         reader could take them for something else, so PyYAML, yaml-cpp and Go's yaml agree.
"""
import json
import re

_PLAIN_SPECIAL = re.compile(r"^(?:[?:,\[\]{}#&*!|>'\"%@`]|-(?:\s|$)|\s)|: |\s#|:$|\s$")
_LOOKS_TYPED = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N"
    r"|[-+]?(?:0|[1-9][0-9_]*)|0[0-7_]+|0o[0-7]+|0x[0-9a-fA-F_]+|0b[01_]+"
    r"|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[0-9]+(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|=|<<)$")


class YamlError(ValueError):
    pass


# ---------------------------------------------------------------- writer

def scalar(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise YamlError("cannot write %r" % (value,))
    if value == "" or _PLAIN_SPECIAL.search(value) or _LOOKS_TYPED.match(value) or \
            any(c in value for c in "\n\t\\\"'") or not value.isprintable():
        return json.dumps(value)
    return value


def dump(obj, indent=0):
    """Block-style YAML for obj; keys keep their insertion order."""
    pad = " " * indent
    out = []
    if isinstance(obj, dict):
        if not obj:
            return pad + "{}\n"
        for key, value in obj.items():
            k = scalar(key)
            if isinstance(value, (dict, list)) and value:
                # Sequences under a mapping key sit at the key's indentation (kubectl style).
                out.append("%s%s:\n%s" % (pad, k, dump(value, indent if isinstance(value, list) else indent + 2)))
            else:
                out.append("%s%s: %s\n" % (pad, k, _inline(value)))
        return "".join(out)
    if isinstance(obj, list):
        if not obj:
            return pad + "[]\n"
        for item in obj:
            if isinstance(item, (dict, list)) and item:
                body = dump(item, indent + 2)
                out.append("%s- %s" % (pad, body[indent + 2:]))
            else:
                out.append("%s- %s\n" % (pad, _inline(item)))
        return "".join(out)
    return pad + scalar(obj) + "\n"


def _inline(value):
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)


def dump_all(docs):
    return "---\n".join(dump(d) for d in docs)


# ---------------------------------------------------------------- reader

def _strip_comment(text):
    """Drops a trailing `# comment` outside quotes."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            if c == quote and not (quote == '"' and text[i - 1] == "\\"):
                quote = None
        elif c in "'\"" and (i == 0 or text[i - 1] in " \t[{,:"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _parse_scalar(text, where):
    text = text.strip()
    if text.startswith('"'):
        try:
            return json.loads(text)
        except ValueError as e:
            raise YamlError("%s: bad double-quoted string %s (%s)" % (where, text, e))
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlError("%s: unterminated single-quoted string %s" % (where, text))
        return text[1:-1].replace("''", "'")
    if text[:1] in ("&", "*", "!", ">", "%", "@", "`"):
        raise YamlError("%s: unsupported YAML construct %r" % (where, text))
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.fullmatch(r"[-+]?(0|[1-9][0-9]*)", text):
        return int(text)
    if re.fullmatch(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


class _Flow:
    """Parses one flow collection: {a: b, c: [1, 2]}."""

    def __init__(self, text, where):
        self.s, self.i, self.where = text, 0, where

    def parse(self):
        value = self._value()
        self._ws()
        if self.i != len(self.s):
            raise YamlError("%s: trailing text after flow collection: %r" % (self.where, self.s[self.i:]))
        return value

    def _ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def _value(self):
        self._ws()
        c = self.s[self.i:self.i + 1]
        if c == "{":
            self.i += 1
            out = {}
            while True:
                self._ws()
                if self.s[self.i:self.i + 1] == "}":
                    self.i += 1
                    return out
                key = self._atom(":")
                if self.s[self.i:self.i + 1] != ":":
                    raise YamlError("%s: expected ':' in flow mapping" % self.where)
                self.i += 1
                out[key] = self._value()
                self._ws()
                if self.s[self.i:self.i + 1] == ",":
                    self.i += 1
        if c == "[":
            self.i += 1
            out = []
            while True:
                self._ws()
                if self.s[self.i:self.i + 1] == "]":
                    self.i += 1
                    return out
                out.append(self._value())
                self._ws()
                if self.s[self.i:self.i + 1] == ",":
                    self.i += 1
        return self._atom(",]}")

    def _atom(self, stops):
        self._ws()
        start = self.i
        if self.s[self.i:self.i + 1] in ("'", '"'):
            q = self.s[self.i]
            self.i += 1
            while self.i < len(self.s):
                if self.s[self.i] == q:
                    if q == "'" and self.s[self.i + 1:self.i + 2] == "'":
                        self.i += 2
                        continue
                    break
                if q == '"' and self.s[self.i] == "\\":
                    self.i += 1
                self.i += 1
            self.i += 1
            return _parse_scalar(self.s[start:self.i], self.where)
        while self.i < len(self.s) and self.s[self.i] not in stops:
            if self.s[self.i] == ":" and ":" in stops and self.s[self.i + 1:self.i + 2] not in (" ", ""):
                self.i += 1
                continue
            self.i += 1
        return _parse_scalar(self.s[start:self.i], self.where)


def _key_value(content):
    """Splits `key: rest` (key plain or quoted); None when content is not a mapping entry."""
    m = re.match(r'^("(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'|[^\s\'"#\[{][^#]*?)\s*:(?:\s+(.*)|$)', content)
    if not m:
        return None
    return m.group(1), (m.group(2) or "")


def load_all(text, name="<yaml>"):
    docs, current = [], []
    for line in text.split("\n"):
        if line.rstrip() == "---" or line.startswith("--- "):
            docs.append(current)
            current = []
        else:
            current.append(line)
    docs.append(current)
    out = []
    for doc_lines in docs:
        value = _load_lines(doc_lines, name)
        if value is not None:
            out.append(value)
    return out


def load(text, name="<yaml>"):
    docs = load_all(text, name)
    if len(docs) > 1:
        raise YamlError("%s: expected one document, found %d" % (name, len(docs)))
    return docs[0] if docs else None


def _load_lines(raw_lines, name):
    lines = []  # (indent, content, lineno, raw)
    for n, raw in enumerate(raw_lines, 1):
        if "\t" in raw[:len(raw) - len(raw.lstrip())]:
            raise YamlError("%s:%d: tab in indentation" % (name, n))
        lines.append((len(raw) - len(raw.lstrip(" ")), raw.strip(), n, raw))
    parser = _Block(lines, name)
    parser.skip_blank()
    if parser.pos >= len(lines):
        return None
    value = parser.node(lines[parser.pos][0])
    parser.skip_blank()
    if parser.pos < len(lines):
        raise YamlError("%s:%d: unexpected indentation" % (name, lines[parser.pos][2]))
    return value


class _Block:
    def __init__(self, lines, name):
        self.lines, self.name, self.pos = lines, name, 0

    def where(self, n):
        return "%s:%d" % (self.name, n)

    def skip_blank(self):
        while self.pos < len(self.lines):
            content = self.lines[self.pos][1]
            if content and not content.startswith("#"):
                return
            self.pos += 1

    def node(self, indent):
        self.skip_blank()
        ind, content, n, _ = self.lines[self.pos]
        if content == "-" or content.startswith("- "):
            return self.sequence(ind)
        if _key_value(_strip_comment(content)) is not None:
            return self.mapping(ind)
        self.pos += 1
        return self.inline(_strip_comment(content), n)

    def inline(self, text, n):
        if text.startswith(("{", "[")):
            return _Flow(text, self.where(n)).parse()
        return _parse_scalar(text, self.where(n))

    def literal(self, parent_indent, keep_trailing):
        # `|` block: lines indented deeper than the parent, newlines kept.
        body, block_indent = [], None
        while self.pos < len(self.lines):
            ind, content, n, raw = self.lines[self.pos]
            if content and ind <= parent_indent:
                break
            if content and block_indent is None:
                block_indent = ind
            body.append(raw[block_indent:] if content else "")
            self.pos += 1
        while body and body[-1] == "":
            body.pop()
        return "\n".join(body) + ("\n" if body and keep_trailing else "")

    def value_after(self, rest, indent, n):
        rest = _strip_comment(rest) if not rest.startswith("|") else rest.strip()
        if rest in ("|", "|-"):
            self.pos += 1
            return self.literal(indent, rest == "|")
        if rest:
            self.pos += 1
            return self.inline(rest, n)
        self.pos += 1
        self.skip_blank()
        if self.pos < len(self.lines):
            ind, content, _, _ = self.lines[self.pos]
            if ind > indent or (ind == indent and (content == "-" or content.startswith("- "))):
                return self.node(ind)
        return None

    def mapping(self, indent):
        out = {}
        while True:
            self.skip_blank()
            if self.pos >= len(self.lines):
                return out
            ind, content, n, _ = self.lines[self.pos]
            if ind < indent:
                return out
            if ind > indent:
                raise YamlError("%s: unexpected indentation" % self.where(n))
            kv = _key_value(content)
            if kv is None:
                if content == "-" or content.startswith("- "):
                    return out
                raise YamlError("%s: expected 'key: value'" % self.where(n))
            key = _parse_scalar(kv[0], self.where(n)) if kv[0][:1] in "'\"" else kv[0]
            if key in out:
                raise YamlError("%s: duplicate key %r" % (self.where(n), key))
            out[key] = self.value_after(kv[1], indent, n)

    def sequence(self, indent):
        out = []
        while True:
            self.skip_blank()
            if self.pos >= len(self.lines):
                return out
            ind, content, n, raw = self.lines[self.pos]
            if ind != indent or not (content == "-" or content.startswith("- ")):
                if ind > indent:
                    raise YamlError("%s: unexpected indentation" % self.where(n))
                return out
            rest = content[1:].lstrip()
            if not rest:
                out.append(self.value_after("", indent, n))
                continue
            item_indent = ind + (len(content) - len(rest))
            # Re-read the item as if `- ` were indentation.
            self.lines[self.pos] = (item_indent, rest, n, " " * item_indent + rest)
            if _key_value(_strip_comment(rest)) is not None or rest.startswith("- "):
                out.append(self.node(item_indent))
            else:
                out.append(self.value_after(rest, indent, n))
