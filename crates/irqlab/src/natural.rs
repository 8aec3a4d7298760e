//! Natural order of strings: digit runs compared by their number
//! (`iter-2` < `iter-10`, `eth2` < `eth10`), the rest character by
//! character. compare's per-iteration files and `--sort name`'s device
//! names are ordered by it. Pure.

use std::cmp::Ordering;

/// Compare strings with digit runs ordered numerically (`iter-2` < `iter-10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    natural_cmp_by(a, b, |c| c)
}

/// [`natural_cmp`] without regard to ASCII case, as `sort -f` folds it
/// (to upper case), ties broken by [`natural_cmp`] itself: `ETH0` <
/// `eth0` < `eth2` < `ETH10` < `Xen`. Allocates nothing.
pub fn natural_cmp_nocase(a: &str, b: &str) -> Ordering {
    natural_cmp_by(a, b, |c| c.to_ascii_uppercase()).then_with(|| natural_cmp(a, b))
}

/// [`natural_cmp`] of the characters as `fold` maps them (digits are
/// compared as they are).
fn natural_cmp_by(a: &str, b: &str, fold: impl Fn(char) -> char) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.len() - a.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let nb = b.len() - b.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let (da, db) = (
                    a[..na].trim_start_matches('0'),
                    b[..nb].trim_start_matches('0'),
                );
                let ord = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
                if ord != Ordering::Equal {
                    return ord;
                }
                (a, b) = (&a[na..], &b[nb..]);
            }
            (Some(x), Some(y)) => {
                let (fx, fy) = (fold(x), fold(y));
                if fx != fy {
                    return fx.cmp(&fy);
                }
                (a, b) = (&a[x.len_utf8()..], &b[y.len_utf8()..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn natural_order() {
        assert_eq!(natural_cmp("iter-2.txt", "iter-10.txt"), Less);
        assert_eq!(natural_cmp("iter-10.txt", "iter-9.txt"), Greater);
        assert_eq!(natural_cmp("a", "a"), Equal);
        assert_eq!(natural_cmp("iter-02", "iter-2"), Equal);
    }

    #[test]
    fn case_folded_as_sort_f_with_a_tiebreak() {
        let cmp = natural_cmp_nocase;
        assert_eq!(cmp("eth0", "Xen-dyn-lsc"), Less);
        assert_eq!(cmp("eth2", "ETH10"), Less);
        assert_eq!(cmp("ETH0", "eth0"), Less);
        assert_eq!(cmp("eth0", "eth0"), Equal);
        // folded up, as sort -f: `_` sorts after the letters
        assert_eq!(cmp("a_b", "aab"), Greater);
    }
}
