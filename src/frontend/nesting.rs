//! How deeply a piece of Python source nests, estimated from its characters before any
//! parser sees it, so that `1+1+…+1` with 100,000 terms or 200,000 `-` signs is refused
//! with its line instead of exhausting the stack (the parser recurses per level on wasm32,
//! and dropping a syntax tree recurses per level everywhere).
//!
//! In: source text. Out: the first line whose statement nests past `MAX_NESTING`, with its
//! estimate. Invariant: the estimate is never below the depth of the syntax tree the parser
//! would build (each operator, `.` and `not` counts a level, each open bracket one more, and
//! a comma or bracket ends the run at its level), so a text it passes cannot nest deeper;
//! strings and comments count nothing.

/// The deepest a statement may nest: RustPython's compiler gives up at a few hundred levels
/// (`RecursionError`), so no program it runs comes near this.
pub const MAX_NESTING: usize = 1_000;

/// Where a text nests too deeply: the 1-based line, and the estimate there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// The line the estimate passed `MAX_NESTING` on.
    pub line: usize,
    /// The estimate.
    pub depth: usize,
}

/// The first place `text` nests past `MAX_NESTING`, if any.
pub fn too_deep(text: &str) -> Option<TooDeep> {
    let bytes = text.as_bytes();
    // Operators counted in each open bracket's current run (the outermost level first).
    let mut runs: Vec<usize> = vec![0];
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => {
                line += 1;
                if runs.len() == 1 {
                    runs[0] = 0;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                let (end, newlines) = string_end(bytes, i);
                line += newlines;
                i = end;
                continue;
            }
            b'(' | b'[' | b'{' => runs.push(0),
            b')' | b']' | b'}' if runs.len() > 1 => {
                runs.pop();
            }
            b',' | b';' => *runs.last_mut().expect("the outermost level") = 0,
            b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^' | b'~' | b'<' | b'>'
            | b'=' | b'!' | b'.' => *runs.last_mut().expect("the outermost level") += 1,
            b'n' if word_at(bytes, i, b"not") => {
                *runs.last_mut().expect("the outermost level") += 1;
            }
            _ => {}
        }
        let depth = runs.iter().sum::<usize>() + runs.len() - 1;
        if depth > MAX_NESTING {
            return Some(TooDeep { line, depth });
        }
        i += 1;
    }
    None
}

/// Whether the identifier `word` stands at `i` on its own.
fn word_at(bytes: &[u8], i: usize, word: &[u8]) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    bytes[i..].starts_with(word)
        && (i == 0 || !ident(bytes[i - 1]))
        && bytes.get(i + word.len()).is_none_or(|&b| !ident(b))
}

/// The index just past the string literal opening at `start` (its quote), and the newlines
/// inside it. An unterminated string ends the text: the parser reports it.
fn string_end(bytes: &[u8], start: usize) -> (usize, usize) {
    let quote = bytes[start];
    let triple = bytes[start..].starts_with(&[quote, quote, quote]);
    let mut i = start + if triple { 3 } else { 1 };
    let mut newlines = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'\n' if !triple => return (i, newlines),
            b'\n' => newlines += 1,
            c if c == quote => {
                if !triple {
                    return (i + 1, newlines);
                }
                if bytes[i..].starts_with(&[quote, quote, quote]) {
                    return (i + 3, newlines);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (bytes.len(), newlines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_code_passes_and_chains_are_refused_at_their_line() {
        let model = "import torch\nx = [-1, -2, -3] * 400\ny = a.b.c(d) + 'text+-*' # ++++\n";
        assert_eq!(too_deep(model), None);
        let list: String = (0..5000).map(|i| format!("-{i}, ")).collect();
        assert_eq!(too_deep(&format!("x = [{list}]\n")), None);
        let sum = vec!["1"; 2000].join("+");
        let chained = too_deep(&format!("import torch\n\ny = {sum}\n")).expect("too deep");
        assert_eq!(chained.line, 3);
        let negated = format!("y = {}1\n", "-".repeat(200_000));
        assert_eq!(too_deep(&negated).map(|t| t.line), Some(1));
        let nots = format!("y = {}x\n", "not ".repeat(2000));
        assert!(too_deep(&nots).is_some());
        let brackets = format!("y = {}1{}\n", "(".repeat(1500), ")".repeat(1500));
        assert!(too_deep(&brackets).is_some());
        let text = format!("s = '''{}'''\n", "+".repeat(5000));
        assert_eq!(too_deep(&text), None);
    }
}
