//! `--memory-map FILE` (`pack`, `inspect`): the partition's flash region read from a GNU ld
//! memory map, the bare-metal template's `memory/board.x` (or `memory/mps2-an386.x`), so that
//! the address the partition is flashed at is written in one place, the one the firmware is
//! linked with.
//!
//! Read: the `MEMORY` block (`NAME [(attrs)] : ORIGIN = EXPR, LENGTH = EXPR`, also spelled
//! `org`/`o` and `len`/`l`) and the two symbols the template's firmware reads the partition
//! at, `__nrtucode_partition_start` and `__nrtucode_partition_end`, assigned bare or in
//! `PROVIDE(...)`/`PROVIDE_HIDDEN(...)`. An expression is numbers (`0x` hex or decimal, with
//! an optional `K` or `M` suffix), `ORIGIN(REGION)` and `LENGTH(REGION)` joined by `+` and
//! `-`; anything else in an expression is refused (not guessed at), and everything else in the
//! file (`SECTIONS`, `INCLUDE`, other symbols) is skipped. Included files are not read: the
//! two symbols must be in the file given.

use std::fmt;
use std::path::Path;

use crate::shared::error::Error;
use crate::shared::input;

/// The symbol at the partition's first byte.
pub(crate) const START_SYMBOL: &str = "__nrtucode_partition_start";
/// The symbol one past the last byte the partition may fill.
pub(crate) const END_SYMBOL: &str = "__nrtucode_partition_end";

/// The partition's flash region, as a memory map defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartitionRegion {
    /// `__nrtucode_partition_start`.
    pub start: u64,
    /// `__nrtucode_partition_end`.
    pub end: u64,
}

impl PartitionRegion {
    /// The bytes from start to end.
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// Why a memory map gives no partition region.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MemoryMapError {
    /// Not the syntax read here, at a line (from 1).
    Syntax {
        /// The line.
        line: usize,
        /// What was expected or found.
        reason: String,
    },
    /// A symbol the partition needs is not assigned.
    Missing {
        /// The symbol.
        symbol: &'static str,
    },
    /// `ORIGIN(X)` or `LENGTH(X)` of a region the `MEMORY` block does not define.
    UnknownRegion {
        /// The region's name.
        name: String,
    },
    /// A value below 0 or above 4 GiB, or an end before the start.
    Range {
        /// What is out of range.
        reason: String,
    },
}

impl fmt::Display for MemoryMapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryMapError::Syntax { line, reason } => write!(f, "line {line}: {reason}"),
            MemoryMapError::Missing { symbol } => write!(
                f,
                "assigns no {symbol} (the template's memory/board.x: PROVIDE({symbol} = ORIGIN(XFLASH)...))"
            ),
            MemoryMapError::UnknownRegion { name } => {
                write!(f, "no MEMORY region named {name}")
            }
            MemoryMapError::Range { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for MemoryMapError {}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Number(u64),
    Punct(char),
}

/// The tokens of `text` with their lines, comments dropped.
fn tokens(text: &str) -> Result<Vec<(usize, Token)>, MemoryMapError> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '/' if text[i..].starts_with("/*") => {
                let Some(len) = text[i + 2..].find("*/") else {
                    return Err(MemoryMapError::Syntax {
                        line,
                        reason: "a comment is not closed".into(),
                    });
                };
                line += text[i..i + 2 + len].matches('\n').count();
                let stop = i + 2 + len + 2;
                while chars.peek().is_some_and(|&(j, _)| j < stop) {
                    chars.next();
                }
            }
            c if c.is_ascii_digit() => {
                let mut end = i + 1;
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' {
                        end = j + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push((line, Token::Number(number(&text[i..end], line)?)));
            }
            c if c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '$') => {
                let mut end = i + 1;
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || matches!(d, '_' | '.' | '$') {
                        end = j + 1;
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push((line, Token::Ident(text[i..end].to_owned())));
            }
            c => out.push((line, Token::Punct(c))),
        }
    }
    Ok(out)
}

/// A number as ld writes it: `0x` hex or decimal, optional `K` or `M` suffix.
fn number(text: &str, line: usize) -> Result<u64, MemoryMapError> {
    let (digits, scale) = match text.as_bytes().last() {
        Some(b'K' | b'k') => (&text[..text.len() - 1], 1024),
        Some(b'M' | b'm') => (&text[..text.len() - 1], 1024 * 1024),
        _ => (text, 1),
    };
    let digits = digits.replace('_', "");
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse::<u64>().ok(),
    };
    value
        .and_then(|v| v.checked_mul(scale))
        .ok_or_else(|| MemoryMapError::Syntax {
            line,
            reason: format!("not a number: {text}"),
        })
}

/// One term of an expression.
#[derive(Debug)]
enum Term {
    Number(u64),
    Origin(String),
    Length(String),
}

/// TERM (('+' | '-') TERM)*: each term with its sign (`true`: +).
type Expression = Vec<(bool, Term)>;

/// A `MEMORY` entry: the region's name, its origin's and its length's expressions.
type RegionEntry = (String, Expression, Expression);

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn line(&self) -> usize {
        self.tokens
            .get(self.at)
            .or(self.tokens.last())
            .map_or(1, |(l, _)| *l)
    }

    fn syntax(&self, reason: impl Into<String>) -> MemoryMapError {
        MemoryMapError::Syntax {
            line: self.line(),
            reason: reason.into(),
        }
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).map(|(_, t)| t.clone());
        self.at += 1;
        t
    }

    fn punct(&mut self, c: char) -> Result<(), MemoryMapError> {
        match self.next() {
            Some(Token::Punct(p)) if p == c => Ok(()),
            other => {
                self.at -= 1;
                Err(self.syntax(format!("expected '{c}', found {}", shown(other.as_ref()))))
            }
        }
    }

    fn ident(&mut self) -> Result<String, MemoryMapError> {
        match self.next() {
            Some(Token::Ident(name)) => Ok(name),
            other => {
                self.at -= 1;
                Err(self.syntax(format!("expected a name, found {}", shown(other.as_ref()))))
            }
        }
    }

    /// TERM (('+' | '-') TERM)*, as (sign, term) pairs.
    fn expression(&mut self) -> Result<Expression, MemoryMapError> {
        let mut terms = vec![(true, self.term()?)];
        while let Some(Token::Punct(op @ ('+' | '-'))) = self.peek() {
            let positive = *op == '+';
            self.at += 1;
            terms.push((positive, self.term()?));
        }
        Ok(terms)
    }

    fn term(&mut self) -> Result<Term, MemoryMapError> {
        match self.next() {
            Some(Token::Number(n)) => Ok(Term::Number(n)),
            Some(Token::Ident(f)) if matches!(f.as_str(), "ORIGIN" | "LENGTH") => {
                self.punct('(')?;
                let region = self.ident()?;
                self.punct(')')?;
                Ok(if f == "ORIGIN" {
                    Term::Origin(region)
                } else {
                    Term::Length(region)
                })
            }
            other => {
                self.at -= 1;
                Err(self.syntax(format!(
                    "an expression of numbers, ORIGIN(R) and LENGTH(R) joined by + and -, found {}",
                    shown(other.as_ref())
                )))
            }
        }
    }

    /// The entries of a `MEMORY { ... }` block, the `{` next.
    fn memory(&mut self) -> Result<Vec<RegionEntry>, MemoryMapError> {
        self.punct('{')?;
        let mut regions = Vec::new();
        loop {
            if self.peek() == Some(&Token::Punct('}')) {
                self.at += 1;
                return Ok(regions);
            }
            let name = self.ident()?;
            if self.peek() == Some(&Token::Punct('(')) {
                while !matches!(self.next(), Some(Token::Punct(')')) | None) {}
            }
            self.punct(':')?;
            let key = self.ident()?;
            if !matches!(key.as_str(), "ORIGIN" | "org" | "o") {
                return Err(self.syntax(format!("expected ORIGIN, found {key}")));
            }
            self.punct('=')?;
            let origin = self.expression()?;
            self.punct(',')?;
            let key = self.ident()?;
            if !matches!(key.as_str(), "LENGTH" | "len" | "l") {
                return Err(self.syntax(format!("expected LENGTH, found {key}")));
            }
            self.punct('=')?;
            let length = self.expression()?;
            regions.push((name, origin, length));
        }
    }
}

fn shown(token: Option<&Token>) -> String {
    match token {
        None => "the end of the file".into(),
        Some(Token::Ident(name)) => name.clone(),
        Some(Token::Number(n)) => n.to_string(),
        Some(Token::Punct(c)) => format!("'{c}'"),
    }
}

/// The value of `terms`, `ORIGIN`/`LENGTH` looked up in `regions`.
fn evaluate(
    terms: &[(bool, Term)],
    regions: &[(String, u64, u64)],
    what: &str,
) -> Result<u64, MemoryMapError> {
    let mut value: i128 = 0;
    for (positive, term) in terms {
        let region = |name: &str| {
            regions
                .iter()
                .find(|(n, _, _)| n == name)
                .ok_or_else(|| MemoryMapError::UnknownRegion { name: name.into() })
        };
        let v = i128::from(match term {
            Term::Number(n) => *n,
            Term::Origin(name) => region(name)?.1,
            Term::Length(name) => region(name)?.2,
        });
        value += if *positive { v } else { -v };
    }
    u64::try_from(value)
        .ok()
        .filter(|&v| v <= 1 << 32)
        .ok_or_else(|| MemoryMapError::Range {
            reason: format!("{what} is {value:#x}, outside the 32-bit address space"),
        })
}

/// The partition region the memory map `text` defines.
pub(crate) fn parse(text: &str) -> Result<PartitionRegion, MemoryMapError> {
    let mut p = Parser {
        tokens: tokens(text)?,
        at: 0,
    };
    let mut raw_regions = Vec::new();
    let mut start = None;
    let mut end = None;
    while let Some(token) = p.next() {
        let Token::Ident(name) = token else { continue };
        if name == "MEMORY" {
            raw_regions.extend(p.memory()?);
        } else if name == START_SYMBOL || name == END_SYMBOL {
            p.punct('=')?;
            let value = p.expression()?;
            match p.peek() {
                Some(Token::Punct(';' | ')')) => {}
                other => {
                    return Err(p.syntax(format!(
                        "expected ';' or ')' after {name}'s value, found {}",
                        shown(other)
                    )));
                }
            }
            let slot = if name == START_SYMBOL {
                &mut start
            } else {
                &mut end
            };
            if slot.replace(value).is_some() {
                return Err(p.syntax(format!("{name} is assigned twice")));
            }
        }
    }
    // A region's origin and length are plain numbers in the maps read here; evaluating them
    // with no region known refuses ORIGIN/LENGTH inside MEMORY.
    let mut regions = Vec::new();
    for (name, origin, length) in &raw_regions {
        let origin = evaluate(origin, &[], &format!("ORIGIN({name})"))?;
        let length = evaluate(length, &[], &format!("LENGTH({name})"))?;
        regions.push((name.clone(), origin, length));
    }
    let start = start.ok_or(MemoryMapError::Missing {
        symbol: START_SYMBOL,
    })?;
    let end = end.ok_or(MemoryMapError::Missing { symbol: END_SYMBOL })?;
    let start = evaluate(&start, &regions, START_SYMBOL)?;
    let end = evaluate(&end, &regions, END_SYMBOL)?;
    if end <= start {
        return Err(MemoryMapError::Range {
            reason: format!("{END_SYMBOL} ({end:#x}) is not above {START_SYMBOL} ({start:#x})"),
        });
    }
    Ok(PartitionRegion { start, end })
}

/// Reads the memory map at `path` (UTF-8, at most 256 KiB: [`input::MEMORY_MAP`]) and its
/// partition region.
pub(crate) fn read(path: &Path) -> Result<PartitionRegion, Error> {
    let text = input::read_text(path, input::MEMORY_MAP)?;
    parse(&text).map_err(|e| Error::bad_data(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = include_str!("../../../../examples/bare-metal/memory/board.x");
    const QEMU: &str = include_str!("../../../../examples/bare-metal/memory/mps2-an386.x");

    #[test]
    fn the_templates_maps_give_their_xflash() {
        assert_eq!(
            parse(BOARD),
            Ok(PartitionRegion {
                start: 0x9000_0000,
                end: 0x9100_0000
            })
        );
        assert_eq!(
            parse(QEMU),
            Ok(PartitionRegion {
                start: 0x2100_0000,
                end: 0x2200_0000
            })
        );
    }

    #[test]
    fn spellings_offsets_and_bare_assignments_are_read() {
        let text = "MEMORY {\n  /* a\n comment */ FLASH (rx) : org = 0x0, len = 1M\n  QSPI (r) : o = 0x10000000, l = 16M\n}\n\
                    __nrtucode_partition_start = ORIGIN(QSPI) + 0x100000;\n\
                    PROVIDE_HIDDEN(__nrtucode_partition_end = ORIGIN(QSPI) + LENGTH(QSPI) - 4K);";
        assert_eq!(
            parse(text),
            Ok(PartitionRegion {
                start: 0x1010_0000,
                end: 0x10ff_f000
            })
        );
    }

    #[test]
    fn what_is_not_read_is_refused_with_its_reason() {
        let memory = "MEMORY { X : ORIGIN = 0x1000, LENGTH = 4K }\n";
        let start = "PROVIDE(__nrtucode_partition_start = ORIGIN(X));\n";
        let end = "PROVIDE(__nrtucode_partition_end = ORIGIN(X) + LENGTH(X));\n";
        let cases = [
            (
                format!("{memory}{end}"),
                "assigns no __nrtucode_partition_start",
            ),
            (
                format!("{memory}{start}"),
                "assigns no __nrtucode_partition_end",
            ),
            (format!("{start}{end}"), "no MEMORY region named X"),
            (
                format!("{memory}__nrtucode_partition_start = ALIGN(16);\n{end}"),
                "line 2: an expression of numbers",
            ),
            (
                format!("{memory}__nrtucode_partition_start = ORIGIN(X) * 2;\n{end}"),
                "line 2: expected ';' or ')'",
            ),
            (
                format!("{memory}{start}PROVIDE(__nrtucode_partition_end = ORIGIN(X));"),
                "is not above",
            ),
            (
                format!("{memory}{start}PROVIDE(__nrtucode_partition_end = 0x100000000 + 1);"),
                "outside the 32-bit address space",
            ),
            (format!("{memory}{start}{end}{start}"), "assigned twice"),
            (
                format!("/* open {memory}{start}{end}"),
                "line 1: a comment is not closed",
            ),
            (
                "MEMORY { X : ORIGIN = 0x1000 LENGTH = 4K }".to_owned(),
                "line 1: expected ','",
            ),
            (
                format!("{memory}__nrtucode_partition_start = 0xZZ;"),
                "not a number: 0xZZ",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(expected), "{expected:?} not in {e:?}");
        }
    }
}
