//! Parsing expression text such as `(s0 - 1)//2 + 1`, e.g. a learner's typed answer.
//!
//! In: text with integers, symbols `s<digits>`, `+ - * // % **`, unary minus, parentheses
//! and `Min(a, b)`/`Max(a, b)` (also `min`/`max`); whitespace is ignored; relations add one
//! of `== != < <= > >=`. Out: a [`RawExpr`] tree as written (or, through `Expr: FromStr`,
//! its canonical form; through `Rel: FromStr`, a relation), or a [`ParseError`] with the
//! 1-based column and what was expected there.
//!
//! Invariant: Python precedence and associativity — `**` binds tightest and to the right
//! (and above unary minus on its left: `-s0**2` is `-(s0**2)`), then unary minus, then
//! `* // %` left to right, then `+ -` left to right.

use std::str::FromStr;

use super::{CmpOp, Expr, RawExpr, Rel, Sym};

/// Longest accepted input. Typed answers and printed guards are far shorter; the cap bounds
/// the recursion depth of simplifying a long left-nested sum (the browser's stack is small).
const MAX_INPUT_CHARS: usize = 4096;

/// Deepest accepted nesting of parentheses, calls and unary minus, for the same reason.
const MAX_NESTING: usize = 64;

/// The largest exponent accepted after `**`; shape formulas use squares and cubes, and a
/// cap keeps the expansion of `(a + b)**n` small.
const MAX_EXPONENT: u32 = 64;

/// Why text is not an expression.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: expected {expected}, found {found}")]
pub struct ParseError {
    /// 1-based column (in characters) where the problem is.
    pub column: usize,
    /// What the parser expected there.
    pub expected: String,
    /// What it found instead.
    pub found: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Int(u64),
    Ident(String),
    Plus,
    Minus,
    Star,
    DoubleStar,
    DoubleSlash,
    Percent,
    LParen,
    RParen,
    Comma,
    Cmp(CmpOp),
    End,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Int(value) => format!("`{value}`"),
            Token::Ident(name) => format!("`{name}`"),
            Token::Plus => "`+`".into(),
            Token::Minus => "`-`".into(),
            Token::Star => "`*`".into(),
            Token::DoubleStar => "`**`".into(),
            Token::DoubleSlash => "`//`".into(),
            Token::Percent => "`%`".into(),
            Token::LParen => "`(`".into(),
            Token::RParen => "`)`".into(),
            Token::Comma => "`,`".into(),
            Token::Cmp(op) => format!("`{op}`"),
            Token::End => "end of input".into(),
        }
    }
}

/// Splits `text` into tokens with their 1-based columns; the last token is `End`.
fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_INPUT_CHARS {
        return Err(ParseError {
            column: MAX_INPUT_CHARS + 1,
            expected: format!("at most {MAX_INPUT_CHARS} characters"),
            found: format!("{} characters", chars.len()),
        });
    }
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let column = i + 1;
        let c = chars[i];
        let (token, width) = match c {
            _ if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' => {
                let digits: String = chars[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let value = digits.parse::<u64>().map_err(|_| ParseError {
                    column,
                    expected: "an integer that fits i64".into(),
                    found: format!("`{digits}`"),
                })?;
                (Token::Int(value), digits.len())
            }
            'a'..='z' | 'A'..='Z' | '_' => {
                let name: String = chars[i..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                    .collect();
                let width = name.chars().count();
                (Token::Ident(name), width)
            }
            '+' => (Token::Plus, 1),
            '-' => (Token::Minus, 1),
            '*' if chars.get(i + 1) == Some(&'*') => (Token::DoubleStar, 2),
            '*' => (Token::Star, 1),
            '/' if chars.get(i + 1) == Some(&'/') => (Token::DoubleSlash, 2),
            '%' => (Token::Percent, 1),
            '(' => (Token::LParen, 1),
            ')' => (Token::RParen, 1),
            ',' => (Token::Comma, 1),
            '=' | '!' | '<' | '>' => {
                let followed_by_equals = chars.get(i + 1) == Some(&'=');
                match (c, followed_by_equals) {
                    ('=', true) => (Token::Cmp(CmpOp::Eq), 2),
                    ('!', true) => (Token::Cmp(CmpOp::Ne), 2),
                    ('<', true) => (Token::Cmp(CmpOp::Le), 2),
                    ('>', true) => (Token::Cmp(CmpOp::Ge), 2),
                    ('<', false) => (Token::Cmp(CmpOp::Lt), 1),
                    ('>', false) => (Token::Cmp(CmpOp::Gt), 1),
                    _ => {
                        return Err(ParseError {
                            column,
                            expected: "`==` or `!=`".into(),
                            found: format!("`{c}`"),
                        });
                    }
                }
            }
            other => {
                let expected = if other == '/' {
                    "`//` (true division `/` is not an integer operation)"
                } else {
                    "an integer, a symbol, an operator or a parenthesis"
                };
                return Err(ParseError {
                    column,
                    expected: expected.into(),
                    found: format!("`{other}`"),
                });
            }
        };
        tokens.push((token, column));
        i += width;
    }
    tokens.push((Token::End, chars.len() + 1));
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    position: usize,
    depth: usize,
}

impl Parser {
    fn new(text: &str) -> Result<Parser, ParseError> {
        Ok(Parser {
            tokens: tokenize(text)?,
            position: 0,
            depth: 0,
        })
    }

    /// Runs `inner` one nesting level deeper, refusing to go beyond `MAX_NESTING`.
    fn nested<T>(
        &mut self,
        inner: impl FnOnce(&mut Parser) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(self.error(&format!("nesting at most {MAX_NESTING} deep")));
        }
        self.depth += 1;
        let result = inner(self);
        self.depth -= 1;
        result
    }

    fn finish(&self) -> Result<(), ParseError> {
        if *self.peek() == Token::End {
            Ok(())
        } else {
            Err(self.error("an operator or the end of input"))
        }
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.position].0
    }

    fn peek_at(&self, offset: usize) -> &Token {
        let index = (self.position + offset).min(self.tokens.len() - 1);
        &self.tokens[index].0
    }

    fn advance(&mut self) -> Token {
        let token = self.tokens[self.position].0.clone();
        if self.position + 1 < self.tokens.len() {
            self.position += 1;
        }
        token
    }

    fn error(&self, expected: &str) -> ParseError {
        let (token, column) = &self.tokens[self.position];
        ParseError {
            column: *column,
            expected: expected.into(),
            found: token.describe(),
        }
    }

    fn expect(&mut self, token: Token, expected: &str) -> Result<(), ParseError> {
        if *self.peek() == token {
            self.advance();
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn sum(&mut self) -> Result<RawExpr, ParseError> {
        let mut tree = self.product()?;
        loop {
            let make = match self.peek() {
                Token::Plus => RawExpr::Add,
                Token::Minus => RawExpr::Sub,
                _ => return Ok(tree),
            };
            self.advance();
            tree = make(Box::new(tree), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<RawExpr, ParseError> {
        let mut tree = self.unary()?;
        loop {
            let make = match self.peek() {
                Token::Star => RawExpr::Mul,
                Token::DoubleSlash => RawExpr::FloorDiv,
                Token::Percent => RawExpr::Mod,
                _ => return Ok(tree),
            };
            self.advance();
            tree = make(Box::new(tree), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<RawExpr, ParseError> {
        if *self.peek() != Token::Minus {
            return self.power();
        }
        self.advance();
        // `-9223372036854775808` is i64::MIN although its digits alone overflow i64; it is
        // only a literal when no `**` follows (`-2**2` is `-(2**2)`).
        if let (Token::Int(value), next) = (self.peek(), self.peek_at(1))
            && *value == i64::MIN.unsigned_abs()
            && *next != Token::DoubleStar
        {
            self.advance();
            return Ok(RawExpr::Int(i64::MIN));
        }
        let operand = self.nested(Parser::unary)?;
        Ok(RawExpr::Neg(Box::new(operand)))
    }

    fn power(&mut self) -> Result<RawExpr, ParseError> {
        let base = self.primary()?;
        if *self.peek() != Token::DoubleStar {
            return Ok(base);
        }
        self.advance();
        let column = self.tokens[self.position].1;
        let exponent = self.nested(Parser::unary)?;
        let value = exponent.simplify().as_int();
        match value.and_then(|v| u32::try_from(v).ok()) {
            Some(exp) if exp <= MAX_EXPONENT => Ok(RawExpr::Pow(Box::new(base), exp)),
            _ => Err(ParseError {
                column,
                expected: format!("a constant exponent between 0 and {MAX_EXPONENT}"),
                found: format!("`{exponent}`"),
            }),
        }
    }

    fn primary(&mut self) -> Result<RawExpr, ParseError> {
        const EXPECTED: &str = "an integer, a symbol like `s0`, `(`, `Min(` or `Max(`";
        match self.peek().clone() {
            Token::Int(value) => {
                let value = i64::try_from(value).map_err(|_| ParseError {
                    found: format!("`{value}`"),
                    ..self.error("an integer that fits i64")
                })?;
                self.advance();
                Ok(RawExpr::Int(value))
            }
            Token::LParen => {
                self.advance();
                let inner = self.nested(Parser::sum)?;
                self.expect(Token::RParen, "`)`")?;
                Ok(inner)
            }
            Token::Ident(name) => {
                let make = match name.as_str() {
                    "Min" | "min" => RawExpr::Min,
                    "Max" | "max" => RawExpr::Max,
                    "F32Ratio" => RawExpr::F32Ratio,
                    "F32FloorMul" => RawExpr::F32FloorMul,
                    _ => return self.symbol(&name),
                };
                self.advance();
                self.expect(Token::LParen, "`(` after the function name")?;
                let first = self.nested(Parser::sum)?;
                self.expect(Token::Comma, "`,` between the two arguments")?;
                let second = self.nested(Parser::sum)?;
                self.expect(Token::RParen, "`)` after the second argument")?;
                Ok(make(Box::new(first), Box::new(second)))
            }
            _ => Err(self.error(EXPECTED)),
        }
    }

    fn symbol(&mut self, name: &str) -> Result<RawExpr, ParseError> {
        let number = name
            .strip_prefix('s')
            .filter(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u32>().ok());
        match number {
            Some(number) => {
                self.advance();
                Ok(RawExpr::Sym(Sym(number)))
            }
            None => Err(self.error("a symbol like `s0`, or `Min`/`Max`")),
        }
    }
}

impl FromStr for RawExpr {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<RawExpr, ParseError> {
        let mut parser = Parser::new(text)?;
        let tree = parser.sum()?;
        parser.finish()?;
        Ok(tree)
    }
}

impl FromStr for Expr {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Expr, ParseError> {
        Ok(text.parse::<RawExpr>()?.simplify())
    }
}

/// Parses `lhs op rhs` with `op` one of `== != < <= > >=`, e.g. a typed guard `s0 >= 2`.
/// Both sides are simplified; the relation itself is kept as written.
impl FromStr for Rel {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Rel, ParseError> {
        let mut parser = Parser::new(text)?;
        let lhs = parser.sum()?;
        let Token::Cmp(op) = *parser.peek() else {
            return Err(parser.error("a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)"));
        };
        parser.advance();
        let rhs = parser.sum()?;
        parser.finish()?;
        Ok(Rel::new(lhs.simplify(), op, rhs.simplify()))
    }
}
