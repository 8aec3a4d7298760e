//! App state of `irqlab top`: the latest sample, the user's choices (sort,
//! filter, CPU selection, panel, scroll, pause, help) and the input line.
//!
//! Every state change goes through [`App::update`] with a [`Msg`]; it is
//! pure (no I/O, no clock) so it is unit-tested directly. The view reads
//! the state through the query methods below and never changes it.

use crate::filter::Filter;
use crate::report::{self, IrqLine, Report};
pub use crate::report::{name_of, SortKey};
use crate::sampler::{SelfCost, Strategy};
use crate::threads::ThreadCpu;
use irqlab_core::Shape;
use std::time::Duration;

/// What the TUI shows of one frame: the rates report (rows carry their
/// count since boot and affinity) and how the live sampler got it.
#[derive(Debug, Default)]
pub struct FrameView {
    pub report: Report,
    pub strategy: Option<Strategy>,
    /// irqlab's cost for this sample (read, parse, threads, report).
    pub self_cost: SelfCost,
    /// `top --trace`: exact interrupt time over the same interval.
    pub trace: Option<crate::trace::top::TopTrace>,
    /// The interval's two `/proc/stat` samples: a CPU selection's sum
    /// ([`App::selected_cpu_time`]) is made from them.
    pub stat: Option<Box<(irqlab_core::Stat, irqlab_core::Stat)>>,
}

/// A key press, already decoded from the terminal's event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    /// A letter with Ctrl held.
    Ctrl(char),
    Enter,
    Esc,
    Backspace,
    Tab,
    BackTab,
    Left,
    Right,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
}

/// Everything that can change the App.
#[derive(Debug)]
pub enum Msg {
    Key(Key),
    Resize(u16, u16),
    Sample(Box<FrameView>),
    /// The interrupt threads' CPU use (`ksoftirqd/N`, `irq/N-name`).
    Threads(Vec<ThreadCpu>),
    /// A sampling error (shown in the status line).
    SampleError(String),
    /// A notice for the status line (e.g. a file that is missing).
    Notice(String),
    /// The live sampler's explanation of its strategy (shown with `-v`).
    Why(String),
    /// The replay player's state (`PLAYING`, `PAUSED`, `END`): the status
    /// line's, in place of live `top`'s running or paused.
    Playback(&'static str),
    /// The screen was drawn, with the status message whole or not
    /// (`view::status_whole`).
    Drawn {
        status_whole: bool,
    },
    /// Periodic wake-up: expires transient status messages.
    Tick,
}

/// The panel in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Irqs,
    Softirqs,
    CpuTime,
}

impl Panel {
    pub const ALL: [Panel; 3] = [Panel::Irqs, Panel::Softirqs, Panel::CpuTime];

    pub fn label(self) -> &'static str {
        match self {
            Panel::Irqs => "IRQs",
            Panel::Softirqs => "softirqs",
            Panel::CpuTime => "CPU time",
        }
    }

    fn next(self) -> Self {
        match self {
            Panel::Irqs => Panel::Softirqs,
            Panel::Softirqs => Panel::CpuTime,
            Panel::CpuTime => Panel::Irqs,
        }
    }

    fn prev(self) -> Self {
        self.next().next()
    }
}

/// What the input line edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Filter,
    Cpus,
}

/// An open input line: it opens empty, the current value is a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub kind: InputKind,
    pub text: String,
    /// The value in force when the line opened (shown, not edited).
    pub hint: String,
}

/// Ticks a transient status message stays.
const STATUS_TICKS: u32 = 5;

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    pub interval: Duration,
    pub color: bool,
    pub sample: Option<FrameView>,
    pub samples: u64,
    pub threads: Vec<ThreadCpu>,
    pub sort: SortKey,
    /// The row filter (`/`): the same [`Filter`] as `show` and `top --batch`.
    pub filter: Filter,
    /// A changed filter the sampler has not been told about yet.
    pub filter_changed: bool,
    /// Hide rows below this rate (`--threshold`).
    pub threshold: Option<f64>,
    /// Show the sampler's explanation and cost breakdown (`-v`).
    pub verbose: bool,
    /// The live sampler's explanation of its strategy.
    pub why: String,
    pub cpus: Option<Vec<u32>>,
    /// The CPU selection as typed (for the status line).
    pub cpus_text: String,
    pub paused: bool,
    pub panel: Panel,
    pub help: bool,
    /// The screen is `irqlab replay`'s: its help lists the player's keys.
    pub replay: bool,
    /// The replay player's state ([`Msg::Playback`]; `None` live).
    pub playback: Option<&'static str>,
    pub input: Option<Input>,
    /// Error or notice for the status line, and ticks left.
    pub status: Option<(String, u32)>,
    /// The last notice until a draw showed it whole: a screen too small
    /// for it, or another message in its place before the first draw.
    pub unseen_notice: Option<String>,
    /// First CPU column shown (horizontal scroll).
    pub cpu_offset: usize,
    /// First row shown (vertical scroll of the active panel).
    pub row_offset: usize,
    pub size: (u16, u16),
    pub quit: bool,
}

impl App {
    pub fn new(interval: Duration, color: bool) -> Self {
        App {
            interval,
            color,
            sample: None,
            samples: 0,
            threads: Vec::new(),
            sort: SortKey::Rate,
            filter: Filter::default(),
            filter_changed: false,
            threshold: None,
            verbose: false,
            why: String::new(),
            cpus: None,
            cpus_text: String::new(),
            paused: false,
            panel: Panel::Irqs,
            help: false,
            replay: false,
            playback: None,
            input: None,
            status: None,
            unseen_notice: None,
            cpu_offset: 0,
            row_offset: 0,
            size: (80, 24),
            quit: false,
        }
    }

    /// Set the row filter from a regex (`""` clears it); `--exclude`
    /// stays in force.
    pub fn set_filter(&mut self, text: &str) -> Result<(), String> {
        let irq = (!text.is_empty()).then_some(text);
        let mut f = Filter::from_flags(irq, None).map_err(|e| {
            let why = e.root_cause().to_string();
            format!("invalid regex {text:?}:\n{}", why.trim_end())
        })?;
        f.exclude = self.filter.exclude.take();
        self.filter = f;
        self.filter_changed = true;
        self.row_offset = 0;
        Ok(())
    }

    /// The filter text in force (empty when none).
    pub fn filter_text(&self) -> &str {
        self.filter.irq.as_ref().map_or("", |r| r.as_str())
    }

    /// The filter to hand to the sampler, once per change.
    pub fn take_filter_change(&mut self) -> Option<Filter> {
        std::mem::take(&mut self.filter_changed).then(|| self.filter.clone())
    }

    /// Select CPUs from a list such as `0-3,8` (`""` selects all).
    pub fn set_cpus(&mut self, text: &str) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() {
            self.cpus = None;
            self.cpus_text.clear();
            return Ok(());
        }
        let list = irqlab_core::CpuList::parse_list(text.as_bytes(), "cpus")
            .map_err(|e| format!("invalid CPU list {text:?}: {}", e.kind))?;
        self.cpus = Some(list.iter().collect());
        if let Some(v) = self.cpus.as_mut() {
            v.sort_unstable();
            v.dedup();
        }
        self.cpus_text = text.to_string();
        self.cpu_offset = 0;
        Ok(())
    }

    /// Apply one message.
    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::Key(k) => self.key(k),
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.clamp_scroll();
            }
            Msg::Sample(s) => {
                if !self.paused {
                    self.sample = Some(*s);
                    self.samples += 1;
                    self.clamp_scroll();
                }
            }
            Msg::Threads(t) => {
                if !self.paused {
                    self.threads = t;
                }
            }
            Msg::SampleError(e) => {
                self.status = Some((format!("sampling failed: {e}"), STATUS_TICKS))
            }
            Msg::Notice(n) => {
                self.unseen_notice = Some(n.clone());
                self.status = Some((n, STATUS_TICKS));
            }
            Msg::Why(w) => self.why = w,
            Msg::Playback(s) => self.playback = Some(s),
            Msg::Drawn { status_whole } => self.drawn(status_whole),
            Msg::Tick => self.tick(),
        }
    }

    /// A draw showed the status whole: a notice in it is seen.
    fn drawn(&mut self, status_whole: bool) {
        let shown = self.status.as_ref().map(|(m, _)| m);
        if status_whole && shown.is_some() && shown == self.unseen_notice.as_ref() {
            self.unseen_notice = None;
        }
    }

    fn tick(&mut self) {
        if let Some((_, left)) = &mut self.status {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.status = None;
            }
        }
    }

    fn key(&mut self, k: Key) {
        if k == Key::Ctrl('c') {
            self.quit = true;
        } else if self.input.is_some() {
            self.input_key(k);
        } else if self.help {
            match k {
                Key::Char('q') => self.quit = true,
                _ => self.help = false,
            }
        } else {
            self.normal_key(k);
        }
    }

    fn normal_key(&mut self, k: Key) {
        match k {
            Key::Char('q') => self.quit = true,
            Key::Char('s') => self.sort = self.sort.next(),
            Key::Char('r') => self.sort = SortKey::Rate,
            Key::Char('t') => self.sort = SortKey::Total,
            Key::Char('i') => self.sort = SortKey::Irq,
            Key::Char('n') => self.sort = SortKey::Name,
            Key::Char('/') => self.open_input(InputKind::Filter),
            Key::Char('c') => self.open_input(InputKind::Cpus),
            Key::Char('p') | Key::Char(' ') => self.paused = !self.paused,
            Key::Char('?') | Key::Char('h') => self.help = true,
            Key::Tab => self.switch_panel(self.panel.next()),
            Key::BackTab => self.switch_panel(self.panel.prev()),
            Key::Esc => self.status = None,
            _ => self.scroll_key(k),
        }
    }

    fn scroll_key(&mut self, k: Key) {
        let page = usize::from(self.size.1.saturating_sub(4)).max(1);
        match k {
            Key::Left => self.cpu_offset = self.cpu_offset.saturating_sub(1),
            Key::Right => self.cpu_offset = self.cpu_offset.saturating_add(1),
            Key::Home => self.cpu_offset = 0,
            Key::End => self.cpu_offset = usize::MAX,
            Key::Up => self.row_offset = self.row_offset.saturating_sub(1),
            Key::Down => self.row_offset = self.row_offset.saturating_add(1),
            Key::PageUp => self.row_offset = self.row_offset.saturating_sub(page),
            Key::PageDown => self.row_offset = self.row_offset.saturating_add(page),
            _ => {}
        }
        self.clamp_scroll();
    }

    fn switch_panel(&mut self, p: Panel) {
        self.panel = p;
        self.row_offset = 0;
    }

    fn open_input(&mut self, kind: InputKind) {
        let hint = match kind {
            InputKind::Filter => self.filter_text().to_string(),
            InputKind::Cpus => self.cpus_text.clone(),
        };
        self.input = Some(Input {
            kind,
            text: String::new(),
            hint,
        });
    }

    fn input_key(&mut self, k: Key) {
        let Some(input) = self.input.as_mut() else {
            return;
        };
        match k {
            Key::Char(c) => input.text.push(c),
            Key::Backspace => {
                input.text.pop();
            }
            Key::Ctrl('u') => input.text.clear(),
            Key::Ctrl('w') => delete_word(&mut input.text),
            Key::Esc => self.input = None,
            Key::Enter => {
                let Input { kind, text, .. } = input.clone();
                self.input = None;
                let res = match kind {
                    InputKind::Filter => self.set_filter(&text),
                    InputKind::Cpus => self.set_cpus(&text),
                };
                match res {
                    Ok(()) => self.status = None,
                    Err(e) => self.status = Some((e, STATUS_TICKS)),
                }
                self.clamp_scroll();
            }
            _ => {}
        }
    }

    fn clamp_scroll(&mut self) {
        let cols = self.selected_columns(self.irq_cpus()).len();
        self.cpu_offset = self.cpu_offset.min(cols.saturating_sub(1));
        let rows = self.row_count();
        self.row_offset = self.row_offset.min(rows.saturating_sub(1));
    }

    /// Rows of the active panel (after the filter and CPU selection).
    pub fn row_count(&self) -> usize {
        match self.panel {
            Panel::Irqs => self.irq_row_count(),
            Panel::Softirqs => self
                .report()
                .and_then(|r| r.softirqs.as_ref())
                .map_or(0, |s| s.rows.len()),
            Panel::CpuTime => self.cpu_pct_rows(),
        }
    }

    fn cpu_pct_rows(&self) -> usize {
        self.report().and_then(|r| r.stat.as_ref()).map_or(0, |s| {
            s.cpu_pct
                .iter()
                .filter(|l| l.cpu.is_none_or(|c| self.cpu_selected(c)))
                .count()
        })
    }

    /// The latest report, if any.
    pub fn report(&self) -> Option<&Report> {
        self.sample.as_ref().map(|s| &s.report)
    }

    /// With a CPU selection: the CPU-time section of the selected CPUs,
    /// their sum first (`sel`, as `top --batch --cpus` makes it), from the
    /// interval's `/proc/stat` samples; `None` without a selection (the
    /// report's section, the kernel's all-CPU line first, is shown).
    pub fn selected_cpu_time(&self) -> Option<report::StatSection> {
        let cpus = self.cpus.as_ref()?;
        let s = self.sample.as_ref()?;
        let (old, new) = s.stat.as_deref()?;
        let f = Filter {
            cpus: Some(cpus.clone()),
            ..Filter::default()
        };
        Some(report::stat_section(old, new, &f, s.report.interval_s))
    }

    /// The latest traced time (`top --trace`), if any.
    pub fn trace(&self) -> Option<&crate::trace::top::TopTrace> {
        self.sample.as_ref().and_then(|s| s.trace.as_ref())
    }

    /// CPU ids of the interrupts section (empty before the first sample).
    pub fn irq_cpus(&self) -> &[u32] {
        self.report()
            .and_then(|r| r.interrupts.as_ref())
            .map_or(&[], |s| s.cpus.as_slice())
    }

    /// Whether `cpu` is in the selection (all are without one).
    pub fn cpu_selected(&self, cpu: u32) -> bool {
        self.cpus
            .as_ref()
            .is_none_or(|l| l.binary_search(&cpu).is_ok())
    }

    /// `(column index, CPU id)` of the selected CPUs of a section.
    pub fn selected_columns(&self, cpus: &[u32]) -> Vec<(usize, u32)> {
        cpus.iter()
            .copied()
            .enumerate()
            .filter(|&(_, c)| self.cpu_selected(c))
            .collect()
    }

    /// Rate of a row over the selected CPUs (all CPUs: the row's total rate).
    pub fn row_rate(&self, line: &IrqLine) -> Option<f64> {
        self.row_rate_in(line, &self.selected_columns(self.irq_cpus()))
    }

    /// [`App::row_rate`] with the selected columns computed once.
    fn row_rate_in(&self, line: &IrqLine, cols: &[(usize, u32)]) -> Option<f64> {
        if self.cpus.is_none() || line.shape != Shape::PerCpu {
            return line.total_rate;
        }
        rate_over(line.rates.as_deref()?, cols)
    }

    fn keep(&self, line: &IrqLine) -> bool {
        line.passes(&self.filter)
            && self
                .threshold
                .is_none_or(|min| report::above_threshold(line, min))
    }

    /// Number of rows that pass the filter (cheaper than sorting them).
    pub fn irq_row_count(&self) -> usize {
        self.irq_lines().count()
    }

    /// The interrupts rows that pass the filter, unsorted.
    pub fn irq_lines(&self) -> impl Iterator<Item = &IrqLine> {
        let sec = self.report().and_then(|r| r.interrupts.as_ref());
        sec.into_iter()
            .flat_map(|s| s.rows.iter())
            .filter(|l| self.keep(l))
    }

    /// Filtered, sorted interrupts rows with their since-boot totals.
    pub fn irq_rows(&self) -> Vec<(&IrqLine, Option<u64>)> {
        let Some(sec) = self.report().and_then(|r| r.interrupts.as_ref()) else {
            return Vec::new();
        };
        let cols = self.selected_columns(&sec.cpus);
        let mut rows: Vec<(&IrqLine, Option<u64>)> = sec
            .rows
            .iter()
            .filter(|l| self.keep(l))
            .map(|l| (l, l.since_boot))
            .collect();
        report::sort_rows(
            &mut rows,
            self.sort,
            |r| r.0,
            |r| self.row_rate_in(r.0, &cols),
        );
        rows
    }
}

/// Ctrl-W: delete the word before the cursor (and the blanks after it).
fn delete_word(text: &mut String) {
    let kept = text
        .trim_end_matches(|c: char| c.is_whitespace() || ",|/".contains(c))
        .len();
    text.truncate(kept);
    let cut = text
        .rfind(|c: char| c.is_whitespace() || ",|/".contains(c))
        .map_or(0, |i| i + 1);
    text.truncate(cut);
}

/// The rate of a row over the columns `cols` of its `rates`: the sum of
/// those that have a value, `None` when none has one (all gaps:
/// [`report::valued_sum`]).
pub fn rate_over(rates: &[Option<f64>], cols: &[(usize, u32)]) -> Option<f64> {
    report::valued_sum(cols.iter().map(|&(i, _)| rates.get(i).copied().flatten()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixtures;

    fn app() -> App {
        let mut a = App::new(Duration::from_secs(1), false);
        a.update(Msg::Sample(Box::new(fixtures::small_sample())));
        a
    }

    /// A row's rate over selected CPUs sums the cells that have a value;
    /// none when every selected cell is a gap (an IRQ row's too).
    #[test]
    fn a_rate_over_selected_gaps_is_none() {
        let rates = [None, Some(2.0), None, Some(0.5)];
        assert_eq!(rate_over(&rates, &[(1, 1), (2, 2), (3, 3)]), Some(2.5));
        assert_eq!(rate_over(&rates, &[(0, 0), (2, 2)]), None);
        assert_eq!(rate_over(&rates, &[]), Some(0.0));
    }

    fn keys(a: &mut App, ks: &[Key]) {
        for &k in ks {
            a.update(Msg::Key(k));
        }
    }

    fn typed(a: &mut App, s: &str) {
        for c in s.chars() {
            a.update(Msg::Key(Key::Char(c)));
        }
    }

    fn labels(a: &App) -> Vec<String> {
        a.irq_rows().iter().map(|r| r.0.label.clone()).collect()
    }

    #[test]
    fn starts_sorted_by_rate_descending() {
        let a = app();
        let rates: Vec<f64> = a
            .irq_rows()
            .iter()
            .map(|r| a.row_rate(r.0).unwrap_or(-1.0))
            .collect();
        assert!(rates.len() > 5);
        assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{rates:?}");
    }

    #[test]
    fn s_cycles_and_letters_pick_sort_keys() {
        let mut a = app();
        keys(&mut a, &[Key::Char('s')]);
        assert_eq!(a.sort, SortKey::Total);
        let totals: Vec<u64> = a.irq_rows().iter().map(|r| r.1.unwrap_or(0)).collect();
        assert!(totals.windows(2).all(|w| w[0] >= w[1]));
        keys(&mut a, &[Key::Char('s')]);
        assert_eq!(a.sort, SortKey::Irq);
        let irqs: Vec<u32> = a.irq_rows().iter().filter_map(|r| r.0.irq).collect();
        assert!(irqs.windows(2).all(|w| w[0] < w[1]));
        let first_arch = a.irq_rows().iter().position(|r| r.0.irq.is_none());
        let last_numbered = a.irq_rows().iter().rposition(|r| r.0.irq.is_some());
        assert!(first_arch > last_numbered);
        keys(&mut a, &[Key::Char('s')]);
        assert_eq!(a.sort, SortKey::Name);
        let names: Vec<String> = a.irq_rows().iter().map(|r| name_of(r.0)).collect();
        let cmp = crate::natural::natural_cmp_nocase;
        assert!(names.windows(2).all(|w| cmp(&w[0], &w[1]).is_le()));
        keys(&mut a, &[Key::Char('s')]);
        assert_eq!(a.sort, SortKey::Rate);
        for (c, k) in [
            ('t', SortKey::Total),
            ('i', SortKey::Irq),
            ('n', SortKey::Name),
            ('r', SortKey::Rate),
        ] {
            keys(&mut a, &[Key::Char(c)]);
            assert_eq!(a.sort, k);
        }
    }

    #[test]
    fn filter_applies_on_enter_and_esc_cancels() {
        let mut a = app();
        let all = a.irq_rows().len();
        keys(&mut a, &[Key::Char('/')]);
        assert!(a.input.is_some());
        typed(&mut a, "^NMI$");
        assert_eq!(a.irq_rows().len(), all, "not applied before Enter");
        keys(&mut a, &[Key::Enter]);
        assert!(a.input.is_none());
        assert_eq!(labels(&a), vec!["NMI"]);
        // Reopen: Esc leaves it unchanged.
        keys(&mut a, &[Key::Char('/')]);
        keys(&mut a, &[Key::Backspace, Key::Esc]);
        assert_eq!(labels(&a), vec!["NMI"]);
        // Empty filter clears.
        keys(&mut a, &[Key::Char('/'), Key::Enter]);
        assert_eq!(a.irq_rows().len(), all);
    }

    #[test]
    fn prompts_open_empty_with_the_current_value_as_hint() {
        let mut a = app();
        keys(&mut a, &[Key::Char('c')]);
        typed(&mut a, "1");
        keys(&mut a, &[Key::Enter, Key::Char('c')]);
        let input = a.input.clone().unwrap();
        assert_eq!((input.text.as_str(), input.hint.as_str()), ("", "1"));
        typed(&mut a, "5-7");
        keys(&mut a, &[Key::Enter]);
        assert_eq!(a.cpus, Some(vec![5, 6, 7]), "typed over, not appended");
        keys(&mut a, &[Key::Char('/')]);
        assert_eq!(a.input.as_ref().map(|i| i.text.as_str()), Some(""));
    }

    #[test]
    fn ctrl_u_clears_and_ctrl_w_deletes_a_word_in_prompts() {
        let mut a = app();
        keys(&mut a, &[Key::Char('/')]);
        typed(&mut a, "eth0|virtio ");
        keys(&mut a, &[Key::Ctrl('w')]);
        assert_eq!(a.input.as_ref().unwrap().text, "eth0|");
        keys(&mut a, &[Key::Ctrl('w')]);
        assert_eq!(a.input.as_ref().unwrap().text, "");
        typed(&mut a, "abc def");
        keys(&mut a, &[Key::Ctrl('u')]);
        assert_eq!(a.input.as_ref().unwrap().text, "");
        assert!(!a.quit && a.input.is_some());
    }

    #[test]
    fn tui_filter_is_the_report_filter() {
        // One row filter for show, top and the TUI: an anchored pattern
        // selects a row by one exact action, as `--irq` does.
        let mut a = app();
        let rows = a.irq_rows();
        let (line, _) = rows.iter().find(|r| !r.0.actions.is_empty()).unwrap();
        let action = line.actions[0].clone();
        let f = Filter::from_flags(Some(&format!("^{}$", regex::escape(&action))), None).unwrap();
        let want: Vec<String> = a
            .report()
            .unwrap()
            .interrupts
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .filter(|l| l.passes(&f))
            .map(|l| l.label.clone())
            .collect();
        a.set_filter(&format!("^{}$", regex::escape(&action)))
            .unwrap();
        let mut got = labels(&a);
        got.sort();
        let mut want = want;
        want.sort();
        assert!(!got.is_empty());
        assert_eq!(got, want);
        assert_eq!(a.take_filter_change().map(|f| f.irq.is_some()), Some(true));
        assert!(a.take_filter_change().is_none(), "handed over once");
    }

    #[test]
    fn threshold_hides_idle_and_slow_rows() {
        let mut a = app();
        let all = a.irq_rows().len();
        a.threshold = Some(0.0);
        let active = a.irq_rows().len();
        assert!(active <= all);
        assert!(a
            .irq_rows()
            .iter()
            .all(|r| r.0.total_rate.unwrap_or(0.0) > 0.0 || r.0.gaps.is_some()));
        a.threshold = Some(f64::MAX);
        assert!(a.irq_rows().iter().all(|r| r.0.gaps.is_some()));
    }

    #[test]
    fn invalid_regex_shows_error_and_keeps_filter() {
        let mut a = app();
        keys(&mut a, &[Key::Char('/')]);
        typed(&mut a, "eth(");
        keys(&mut a, &[Key::Enter]);
        let (msg, _) = a.status.clone().unwrap();
        assert!(msg.contains("invalid regex"), "{msg}");
        assert!(
            msg.lines().count() > 1,
            "the regex error keeps its lines: {msg}"
        );
        assert!(a.filter.irq.is_none());
        for _ in 0..STATUS_TICKS {
            a.update(Msg::Tick);
        }
        assert!(a.status.is_none(), "status expires");
    }

    #[test]
    fn cpu_selection_restricts_columns_and_rate() {
        let mut a = app();
        keys(&mut a, &[Key::Char('c')]);
        typed(&mut a, "1,3");
        keys(&mut a, &[Key::Enter]);
        assert_eq!(a.cpus, Some(vec![1, 3]));
        let cols = a.selected_columns(a.irq_cpus());
        assert_eq!(cols.iter().map(|c| c.1).collect::<Vec<_>>(), vec![1, 3]);
        let rows = a.irq_rows();
        let (line, _) = rows.iter().find(|r| r.0.shape == Shape::PerCpu).unwrap();
        let rates = line.rates.as_ref().unwrap();
        let want: f64 = cols.iter().filter_map(|&(i, _)| rates[i]).sum();
        assert_eq!(a.row_rate(line), Some(want));
        keys(&mut a, &[Key::Char('c')]);
        typed(&mut a, "x");
        keys(&mut a, &[Key::Enter]);
        assert!(a.status.as_ref().unwrap().0.contains("invalid CPU list"));
        assert_eq!(a.cpus, Some(vec![1, 3]), "bad input keeps the selection");
    }

    #[test]
    fn pause_freezes_samples_and_threads() {
        let mut a = app();
        keys(&mut a, &[Key::Char('p')]);
        assert!(a.paused);
        a.update(Msg::Sample(Box::default()));
        a.update(Msg::Threads(crate::tui::fixtures::threads()));
        assert_eq!(a.samples, 1);
        assert!(a.threads.is_empty());
        assert!(!a.irq_rows().is_empty());
        keys(&mut a, &[Key::Char(' ')]);
        assert!(!a.paused);
        a.update(Msg::Sample(Box::default()));
        assert_eq!(a.samples, 2);
        assert!(a.irq_rows().is_empty());
    }

    #[test]
    fn resize_and_scroll_are_clamped() {
        let mut a = app();
        a.update(Msg::Resize(200, 50));
        assert_eq!(a.size, (200, 50));
        keys(&mut a, &[Key::End]);
        assert_eq!(a.cpu_offset, a.irq_cpus().len() - 1);
        keys(&mut a, &[Key::Right, Key::Home, Key::Left]);
        assert_eq!(a.cpu_offset, 0);
        for _ in 0..100 {
            keys(&mut a, &[Key::PageDown]);
        }
        assert_eq!(a.row_offset, a.irq_rows().len() - 1);
        keys(&mut a, &[Key::Up]);
        assert_eq!(a.row_offset, a.irq_rows().len() - 2);
    }

    #[test]
    fn tab_switches_panels_and_resets_rows() {
        let mut a = app();
        keys(&mut a, &[Key::Down, Key::Tab]);
        assert_eq!((a.panel, a.row_offset), (Panel::Softirqs, 0));
        keys(&mut a, &[Key::Tab]);
        assert_eq!(a.panel, Panel::CpuTime);
        keys(&mut a, &[Key::Tab]);
        assert_eq!(a.panel, Panel::Irqs);
        keys(&mut a, &[Key::BackTab]);
        assert_eq!(a.panel, Panel::CpuTime);
    }

    #[test]
    fn help_opens_and_any_key_closes_it() {
        let mut a = app();
        keys(&mut a, &[Key::Char('?')]);
        assert!(a.help);
        keys(&mut a, &[Key::Char('s')]);
        assert!(!a.help);
        assert_eq!(a.sort, SortKey::Rate, "the closing key does nothing else");
        keys(&mut a, &[Key::Char('h')]);
        assert!(a.help);
        keys(&mut a, &[Key::Char('q')]);
        assert!(a.quit);
    }

    #[test]
    fn q_and_ctrl_c_quit_even_in_input() {
        let mut a = app();
        keys(&mut a, &[Key::Char('/'), Key::Char('q')]);
        assert!(!a.quit, "q is text in the input line");
        keys(&mut a, &[Key::Ctrl('c')]);
        assert!(a.quit);
        let mut b = app();
        keys(&mut b, &[Key::Char('q')]);
        assert!(b.quit);
    }

    #[test]
    fn sample_error_is_shown() {
        let mut a = app();
        a.update(Msg::SampleError("boom".into()));
        assert_eq!(
            a.status.as_ref().map(|s| s.0.as_str()),
            Some("sampling failed: boom")
        );
        a.update(Msg::Notice("note".into()));
        assert_eq!(a.status.as_ref().map(|s| s.0.as_str()), Some("note"));
    }

    /// A notice stays unseen until a draw shows it whole; an error in
    /// its place, or a draw that cut it, leaves it unseen.
    #[test]
    fn a_notice_is_seen_once_drawn_whole() {
        let mut a = app();
        a.update(Msg::Notice("warning: x".into()));
        a.update(Msg::Drawn {
            status_whole: false,
        });
        assert_eq!(a.unseen_notice.as_deref(), Some("warning: x"));
        a.update(Msg::Drawn { status_whole: true });
        assert_eq!(a.unseen_notice, None);
        a.update(Msg::Notice("warning: y".into()));
        a.update(Msg::SampleError("boom".into()));
        a.update(Msg::Drawn { status_whole: true });
        assert_eq!(a.unseen_notice.as_deref(), Some("warning: y"));
    }
}
