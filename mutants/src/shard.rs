//! `--shard K/N`: a deterministic share of a spec, so N machines split one run.
//!
//! Mutants are dealt round-robin in spec order (the i-th selected mutant goes to shard
//! `i mod N + 1`), not in contiguous blocks: hand-written specs group mutants by file, and the
//! slow suite's mutants would otherwise all land on one machine. The share depends only on the
//! spec and the selection, never on timing, so `merge` can rebuild the single run's report.

use std::str::FromStr;

use crate::record::Shard;

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("bad shard {s:?}: write it as K/N with 1 <= K <= N, like 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// The items of `all` that belong to this shard.
    pub fn select<T>(&self, all: Vec<T>) -> Vec<T> {
        all.into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.n == self.k - 1)
            .map(|(_, t)| t)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!("2/4".parse(), Ok(Shard { k: 2, n: 4 }));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_partition_the_selection() {
        let all: Vec<usize> = (0..11).collect();
        let mut joined: Vec<usize> = (1..=3)
            .flat_map(|k| Shard { k, n: 3 }.select(all.clone()))
            .collect();
        joined.sort_unstable();
        assert_eq!(joined, all);
        assert_eq!(Shard { k: 2, n: 3 }.select(all), vec![1, 4, 7, 10]);
    }
}
