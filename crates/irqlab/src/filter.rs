//! The row filter of every command: which interrupt rows (`--irq`,
//! `--exclude`) and which CPUs (`--cpus`) to keep, tested on a parsed row or on a line's
//! fields. `prefilter` rejects a raw line before it is parsed; `warnings`
//! says when a filter selects nothing or less than asked. Pure.

pub mod prefilter;
pub mod warnings;

use irqlab_core::IrqRow;
use regex::Regex;

/// Which rows and CPUs to keep.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Keep rows whose label, description, chip or one action matches.
    pub irq: Option<Regex>,
    /// Then drop rows whose label, description, chip or one action matches.
    pub exclude: Option<Regex>,
    /// Keep only these CPU ids, ascending (None = all).
    pub cpus: Option<Vec<u32>>,
}

impl Filter {
    /// Build from the `--irq REGEX` and `--cpus LIST` flags.
    pub fn from_flags(irq: Option<&str>, cpus: Option<&str>) -> anyhow::Result<Filter> {
        use anyhow::Context;
        let irq = irq
            .map(Regex::new)
            .transpose()
            .context("--irq is not a valid regular expression")?;
        let cpus = cpus
            .map(|s| {
                irqlab_core::CpuList::parse_list(s.as_bytes(), "--cpus")
                    .map(|l| l.iter().collect::<Vec<u32>>())
                    .map_err(|e| anyhow::anyhow!("--cpus {s:?}: {}", e.kind))
            })
            .transpose()?;
        Ok(Filter {
            irq,
            exclude: None,
            cpus,
        })
    }

    /// This filter with `--exclude REGEX` (None: drop nothing).
    pub fn excluding(mut self, exclude: Option<&str>) -> anyhow::Result<Filter> {
        use anyhow::Context;
        self.exclude = exclude
            .map(Regex::new)
            .transpose()
            .context("--exclude is not a valid regular expression")?;
        Ok(self)
    }

    /// True when `row` passes the `--irq` filter.
    pub fn keep_irq_row(&self, row: &IrqRow) -> bool {
        if self.irq.is_none() && self.exclude.is_none() {
            // every row: no split of the action list per row per sample
            return true;
        }
        self.keep_fields(
            &row.label,
            &row.description,
            &row.parts.chip,
            row.parts.actions(),
        )
    }

    /// THE row test of every command (show, top, the TUI, replay, record,
    /// serve, trace): `--irq` matches the label, the whole description,
    /// the chip or any one action (so `^eth0$` selects a device by its
    /// exact action name), and `--exclude` matches none of them.
    pub fn keep_fields<'a>(
        &self,
        label: &str,
        description: &str,
        chip: &str,
        actions: impl Iterator<Item = &'a str> + Clone,
    ) -> bool {
        let hit = |re: &Regex| {
            re.is_match(label)
                || re.is_match(description)
                || (!chip.is_empty() && re.is_match(chip))
                || actions.clone().any(|a| re.is_match(a))
        };
        self.irq.as_ref().is_none_or(hit) && !self.exclude.as_ref().is_some_and(hit)
    }

    /// True when `cpu` passes the `--cpus` filter.
    pub fn keep_cpu(&self, cpu: u32) -> bool {
        self.cpus
            .as_ref()
            .is_none_or(|l| l.binary_search(&cpu).is_ok())
    }

    /// This filter without its `--irq` and `--exclude` parts (the CPU
    /// selection only).
    pub fn cpus_only(&self) -> Filter {
        Filter {
            irq: None,
            exclude: None,
            cpus: self.cpus.clone(),
        }
    }

    /// Column indices of `cpus` that pass the CPU filter.
    pub fn columns(&self, cpus: &[u32]) -> Vec<usize> {
        (0..cpus.len())
            .filter(|&i| cpus.get(i).is_some_and(|&c| self.keep_cpu(c)))
            .collect()
    }
}
