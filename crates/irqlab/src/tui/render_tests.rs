//! Rendering tests: insta snapshots of each panel from fixed synth data
//! (no timing), and the 1152-CPU machine at 80×24 and 200×50 (no panic,
//! no line wider than the area, CPU headers whole and in order).

use super::app::{App, Key, Msg};
use super::fixtures;
use super::view;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;
use std::time::Duration;

fn app_with(sample: super::app::FrameView) -> App {
    let mut a = App::new(Duration::from_secs(1), false);
    a.update(Msg::Sample(Box::new(sample)));
    a.update(Msg::Threads(fixtures::threads()));
    a
}

fn press(a: &mut App, keys: &[Key]) {
    for &k in keys {
        a.update(Msg::Key(k));
    }
}

fn lines(b: &Buffer) -> Vec<String> {
    let w = usize::from(b.area.width);
    b.content
        .chunks(w.max(1))
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect()
}

fn render(a: &mut App, w: u16, h: u16) -> Vec<String> {
    a.update(Msg::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::draw(f, a)).unwrap();
    let out = lines(t.backend().buffer());
    assert_eq!(out.len(), usize::from(h));
    for l in &out {
        assert!(l.chars().count() <= usize::from(w), "too wide: {l:?}");
    }
    out
}

fn text(a: &mut App, w: u16, h: u16) -> String {
    render(a, w, h)
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

fn medium() -> App {
    app_with(fixtures::sample(8, 40))
}

#[test]
fn irqs_80x24() {
    insta::assert_snapshot!(text(&mut medium(), 80, 24));
}

#[test]
fn irqs_200x50() {
    insta::assert_snapshot!(text(&mut medium(), 200, 50));
}

#[test]
fn irqs_scrolled_filtered_selected_80x24() {
    let mut a = medium();
    a.set_filter("PCI|NMI|LOC").unwrap();
    a.set_cpus("2-7").unwrap();
    press(&mut a, &[Key::Right, Key::Char('i')]);
    insta::assert_snapshot!(text(&mut a, 80, 24));
}

#[test]
fn softirqs_80x24() {
    let mut a = medium();
    press(&mut a, &[Key::Tab]);
    insta::assert_snapshot!(text(&mut a, 80, 24));
}

/// A softirq vector whose count went back on every CPU shows `-` as its
/// rate, not 0, with all CPUs or some selected; with a selection a rate
/// is over the selected CPUs, not only the columns that fit.
#[test]
fn softirq_row_with_no_value_shows_a_dash() {
    let (mut old, new) = fixtures::snapshots(8, 40);
    for v in &mut old.softirqs.as_mut().unwrap().rows[0].counts {
        *v += 1_000_000;
    }
    let mut a = app_with(fixtures::sample_of(&old, &new, 8));
    press(&mut a, &[Key::Tab]);
    let rate = |a: &mut App, name: &str| {
        let screen = render(a, 40, 24);
        let l = screen.iter().find(|l| l.starts_with(name));
        let l = l.unwrap_or_else(|| panic!("{screen:#?}"));
        l.split_whitespace().nth(1).unwrap().to_string()
    };
    assert_eq!(rate(&mut a, "HI "), "-");
    let all = rate(&mut a, "TIMER ");
    a.set_cpus("0-7").unwrap();
    assert_eq!(rate(&mut a, "HI "), "-");
    assert_eq!(rate(&mut a, "TIMER "), all);
    a.set_cpus("2").unwrap();
    assert_eq!(rate(&mut a, "HI "), "-");
    assert_eq!(rate(&mut a, "TIMER "), "310");
}

#[test]
fn cpu_time_80x24() {
    let mut a = medium();
    press(&mut a, &[Key::Tab, Key::Tab]);
    insta::assert_snapshot!(text(&mut a, 80, 24));
}

/// Every line of the CPU panel adds up to 100 % (user, nice, system,
/// iowait, irq, softirq, steal, idle, as `top --batch`), with niced,
/// iowait and steal time in the sample.
#[test]
fn cpu_time_shares_add_up_to_100() {
    let mut a = medium();
    press(&mut a, &[Key::Tab, Key::Tab]);
    let screen = render(&mut a, 80, 24);
    let head = screen
        .iter()
        .position(|l| l.contains("USR%"))
        .unwrap_or_else(|| panic!("{screen:#?}"));
    let names: Vec<&str> = screen[head].split_whitespace().take(9).collect();
    assert_eq!(
        names,
        ["CPU", "USR%", "NICE%", "SYS%", "IOW%", "IRQ%", "SOFT%", "STL%", "IDLE%"]
    );
    let mut seen = 0;
    for l in &screen[head + 1..] {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 9 || !(f[0] == "all" || f[0].parse::<u32>().is_ok()) {
            continue;
        }
        let v: Vec<f64> = f[1..9].iter().map(|x| x.parse().unwrap()).collect();
        let sum: f64 = v.iter().sum();
        // eight values rounded to 0.1 each
        assert!((sum - 100.0).abs() <= 0.45, "{l}: {sum}");
        assert!(
            v[1] > 0.0 && v[3] > 0.0 && v[6] > 0.0,
            "nice, iowait, steal: {l}"
        );
        seen += 1;
    }
    assert_eq!(seen, 9, "all + 8 CPUs: {screen:#?}");
}

/// With a CPU selection (`--cpus`, the `c` key; replay of a `record
/// --cpus` run) the CPU-time panel's first line sums the selected CPUs,
/// named `sel` with the CPUs in the title, as `top --batch --cpus` sums
/// them; it was the whole machine's `all` line beside the selected CPUs.
#[test]
fn a_cpu_selection_s_time_is_summed_and_named() {
    let (old, new) = fixtures::snapshots(8, 40);
    let mut a = app_with(fixtures::sample_of(&old, &new, 8));
    a.set_cpus("1,3").unwrap();
    press(&mut a, &[Key::Tab, Key::Tab]);
    let screen = render(&mut a, 100, 24);
    assert!(
        screen
            .iter()
            .any(|l| l.contains("CPU time over the interval (sel = CPUs 1,3 together)")),
        "{screen:#?}"
    );
    let first: Vec<&str> = screen
        .iter()
        .skip_while(|l| !l.contains("USR%"))
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    let f = crate::filter::Filter::from_flags(None, Some("1,3")).unwrap();
    let want = crate::report::stat_section(
        old.stat.as_ref().unwrap(),
        new.stat.as_ref().unwrap(),
        &f,
        Some(1.0),
    );
    let sel = want.cpu_pct[0].pct.as_ref().unwrap().in_print_order();
    assert_eq!(first[0], "sel", "{screen:#?}");
    for (cell, v) in first[1..9].iter().zip(sel) {
        assert_eq!(*cell, super::format::pct(v), "{first:?}");
    }
    a.set_cpus("").unwrap();
    let screen = render(&mut a, 100, 24);
    assert!(
        screen.iter().any(|l| l.trim_start().starts_with("all ")),
        "{screen:#?}"
    );
}

#[test]
fn help_80x24() {
    let mut a = medium();
    press(&mut a, &[Key::Char('?')]);
    insta::assert_snapshot!(text(&mut a, 80, 24));
}

/// The text inside the help box of a rendered screen, one space between
/// words (a phrase wrapped across lines reads whole), and whether the
/// box's bottom border is on the screen (nothing cut).
fn help_box_text(out: &[String]) -> (String, bool) {
    let top = out.iter().position(|l| l.contains("┌ help")).unwrap();
    let x = out[top].chars().position(|c| c == '┌').unwrap();
    let mut words = Vec::new();
    for l in &out[top + 1..] {
        let row: Vec<char> = l.chars().skip(x).collect();
        if row.first() == Some(&'└') {
            return (words.join(" "), true);
        }
        let end = row.iter().rposition(|&c| c == '│').unwrap_or(row.len());
        let inside: String = row.get(1..end).unwrap_or_default().iter().collect();
        words.extend(inside.split_whitespace().map(String::from));
    }
    (words.join(" "), false)
}

/// The replay screen's App: its position line and key help are two more
/// footer lines (as `replay::Player::status` sends them).
fn replay_app() -> App {
    let mut a = medium();
    a.replay = true;
    a.verbose = true;
    let why = format!("replay │ position\n{}", super::replay::HELP);
    a.update(Msg::Why(why));
    a
}

/// The help names every gap a `-` cell can stand for (`Gap::ALL`), whole
/// inside its box at 80×24: live, and in replay (its keys in the help,
/// its position and keys two more footer lines).
#[test]
fn help_names_every_gap_whole_at_80x24() {
    use irqlab_core::delta::Gap;
    for replay in [false, true] {
        let mut a = if replay { replay_app() } else { medium() };
        press(&mut a, &[Key::Char('?')]);
        let out = render(&mut a, 80, 24);
        let (help, whole) = help_box_text(&out);
        assert!(whole, "replay {replay}: the help is cut: {out:#?}");
        for g in Gap::ALL {
            let words = view::gap_words(g);
            assert!(help.contains(words), "{g:?} ({words}) not in: {help}");
        }
        for l in view::help_lines(replay) {
            assert!(l.chars().count() <= 68, "wider than the box: {l:?}");
        }
    }
}

/// The help in replay lists the player's keys (`replay::HELP_KEYS`, each
/// line whole) in place of top's pause key, inside its box at 80×24;
/// live top's help lists the pause key and not the player's.
#[test]
fn replay_help_lists_the_replay_keys_whole_at_80x24() {
    for replay in [false, true] {
        let mut a = if replay { replay_app() } else { medium() };
        press(&mut a, &[Key::Char('?')]);
        let out = render(&mut a, 80, 24);
        let (help, whole) = help_box_text(&out);
        assert!(whole, "replay {replay}: the help is cut: {out:#?}");
        for k in super::replay::HELP_KEYS {
            let words = k.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(help.contains(&words), replay, "{words:?} in: {help}");
        }
        assert_eq!(help.contains("pause / resume"), !replay, "{help}");
    }
}

#[test]
fn help_replay_80x24() {
    let mut a = replay_app();
    press(&mut a, &[Key::Char('?')]);
    insta::assert_snapshot!(text(&mut a, 80, 24));
}

#[test]
fn footer_shows_input_error_and_pause() {
    let mut a = medium();
    press(&mut a, &[Key::Char('/'), Key::Char('e'), Key::Char('t')]);
    let out = render(&mut a, 80, 24);
    assert!(out[23].starts_with("filter (regex, Enter applies, Esc cancels): et_"));
    press(&mut a, &[Key::Char('('), Key::Enter]);
    let out = render(&mut a, 80, 24);
    // every line of the regex error, its caret included, is on screen
    let first = out
        .iter()
        .position(|l| l.starts_with("invalid regex"))
        .unwrap();
    assert!(first < 23, "{out:#?}");
    assert!(
        out[first..].iter().any(|l| l.trim_start().starts_with('^')),
        "{out:#?}"
    );
    assert!(out[23].contains("unclosed group"), "{}", out[23]);
    press(&mut a, &[Key::Esc, Key::Char('p'), Key::Char('n')]);
    let s = view::status_text(&a);
    assert!(s.contains("PAUSED") && s.contains("sort name") && s.contains("every 1s"));
    assert!(s.contains("8 CPUs") && s.contains("filter none"), "{s}");
}

/// A notice longer than the screen is wide (the files' note of paths and
/// CPU lists) is wrapped at spaces in the footer, read whole; each of
/// several notices starts its own line.
#[test]
fn a_long_notice_is_wrapped_whole_in_the_footer() {
    let mut a = medium();
    let note = "the files disagree on the CPUs: /some/where/a/long/root/proc/interrupts lists 4 CPUs (0-3), /some/where/a/long/root/proc/stat lists 2 CPUs (0-1); each section shows its own file's";
    a.update(Msg::Notice(format!("not shown: proc/softirqs\n{note}")));
    let out = render(&mut a, 60, 24);
    let foot: Vec<&str> = out
        .iter()
        .map(|l| l.trim_end())
        .skip_while(|l| !l.starts_with("not shown"))
        .collect();
    assert_eq!(foot[0], "not shown: proc/softirqs", "{out:#?}");
    assert!(foot.len() > 3, "{out:#?}");
    assert_eq!(foot[1..].join(" "), note, "{out:#?}");
}

/// `status_whole` says whether the footer shows the notice whole: on a
/// screen with room for its lines, not on one too short or too narrow
/// for them (nor with the input line in its place); the draw shows as
/// many of its lines as it says.
#[test]
fn a_notice_is_whole_only_where_it_fits() {
    use ratatui::layout::Rect;
    let mut a = medium();
    let two = "warning: --cpus 99 selects no CPU: the sampled files list 8 CPUs (0-7)\n\
               warning: --irq \"x\" matches no interrupt row";
    a.update(Msg::Notice(two.into()));
    let whole = |a: &App, w, h| view::status_whole(a, Rect::new(0, 0, w, h));
    assert!(whole(&a, 80, 24) && whole(&a, 80, 4));
    let out = render(&mut a, 80, 4);
    assert_eq!(
        out[3].trim_end(),
        "warning: --irq \"x\" matches no interrupt row"
    );
    assert!(!whole(&a, 80, 3), "one footer line for two");
    let out = render(&mut a, 80, 3);
    assert!(!out.iter().any(|l| l.contains("--irq")), "{out:#?}");
    // 10 columns: more than 8 wrapped lines
    assert!(!whole(&a, 10, 24));
    press(&mut a, &[Key::Char('/')]);
    assert!(!whole(&a, 80, 24), "the input line is in its place");
}

#[test]
fn footer_shows_strategy_self_cost_and_affinity() {
    let mut a = medium();
    let out = render(&mut a, 120, 30);
    let foot = &out[29];
    assert!(foot.contains("strategy proc_interrupts"), "{foot}");
    assert!(foot.contains("self-cost 321 µs CPU/sample"), "{foot}");
    a.verbose = true;
    a.update(Msg::Why(
        "strategy proc_interrupts: no --irq selection".into(),
    ));
    let out = render(&mut a, 120, 30);
    assert!(out[28].contains("user 100 µs sys 200 µs"), "{}", out[28]);
    assert!(out[29].contains("no --irq selection"), "{}", out[29]);
}

#[test]
fn prompt_opens_empty_with_the_current_value_as_hint() {
    let mut a = medium();
    press(
        &mut a,
        &[Key::Char('c'), Key::Char('1'), Key::Enter, Key::Char('c')],
    );
    let out = render(&mut a, 100, 24);
    assert!(
        out[23].starts_with("CPUs (e.g. 0-3,8; empty = all): _  (now: 1;"),
        "{}",
        out[23]
    );
}

#[test]
fn waiting_before_the_first_sample() {
    let mut a = App::new(Duration::from_millis(200), false);
    let out = render(&mut a, 80, 24);
    assert!(out[1].starts_with("waiting for the first interval (200ms)"));
}

#[test]
fn tiny_terminals_do_not_panic() {
    let mut a = medium();
    for (w, h) in [(1, 1), (10, 3), (30, 5), (0, 0)] {
        for _ in 0..3 {
            let _ = render(&mut a, w.max(1), h.max(1));
            press(&mut a, &[Key::Tab, Key::Char('?')]);
        }
    }
}

/// CPU ids in the header row of the IRQ or softirq panel.
fn header_cpus(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .filter_map(|t| t.strip_prefix("CPU"))
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// The CPU the header names as the first column drawn (`col X of M:
/// CPUc`), `None` when it names none.
fn header_first_cpu(line: &str) -> Option<u32> {
    let after = line.split(": CPU").nth(1)?;
    after.split_whitespace().next()?.parse().ok()
}

/// The header names the first CPU column the panel draws, scrolled or
/// not, and says that none fits where the IRQ panel's DEVICE column
/// takes the room (40 columns); the softirq panel's columns are its own
/// file's (here 4 CPUs of the 8 in /proc/interrupts).
#[test]
fn header_names_the_cpu_columns_drawn() {
    let mut fewer = medium();
    let sec = fewer
        .sample
        .as_mut()
        .unwrap()
        .report
        .softirqs
        .as_mut()
        .unwrap();
    sec.cpus.truncate(4);
    for r in &mut sec.rows {
        r.rates.as_mut().unwrap().truncate(4);
    }
    let mut none_fit = 0;
    for (mut a, softirq_cpus) in [(medium(), 8), (fewer, 4)] {
        for (panel, cpus) in [(0, 8), (1, softirq_cpus)] {
            for w in 40..=100 {
                for keys in [&[Key::Home][..], &[Key::Right; 3][..], &[Key::End][..]] {
                    press(&mut a, keys);
                    let out = render(&mut a, w, 6);
                    let drawn = header_cpus(&out[1]).first().copied();
                    let claimed = header_first_cpu(&out[0]);
                    assert_eq!(claimed, drawn, "panel {panel}, {w} wide: {out:#?}");
                    if drawn.is_none() {
                        let none = format!("0 of {cpus} CPU columns fit");
                        assert!(out[0].contains(&none), "{out:#?}");
                        none_fit += 1;
                    } else {
                        let of = format!(" of {cpus}: CPU");
                        assert!(out[0].contains(&of), "{out:#?}");
                    }
                }
            }
            press(&mut a, &[Key::Tab]);
        }
    }
    assert!(none_fit > 0, "no width without CPU columns");
}

#[test]
fn cpus_1152_render_at_80x24_and_200x50() {
    let mut a = app_with(fixtures::sample(1152, 1056));
    assert_eq!(a.irq_cpus().len(), 1152);
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        for panel in 0..3 {
            for keys in [
                &[][..],
                &[Key::Right; 7][..],
                &[Key::End][..],
                &[Key::PageDown; 3][..],
            ] {
                press(&mut a, &[Key::Home]);
                press(&mut a, keys);
                let out = render(&mut a, w, h);
                if panel < 2 {
                    let cpus = header_cpus(&out[1]);
                    assert!(!cpus.is_empty(), "{w}x{h}: {}", out[1]);
                    let first = a.selected_columns(a.irq_cpus())[a.cpu_offset].1;
                    assert_eq!(cpus[0], first);
                    assert!(cpus.windows(2).all(|p| p[1] == p[0] + 1));
                }
                if panel == 0 {
                    assert!(out[1].contains("DEVICE"), "{}", out[1]);
                }
            }
            press(&mut a, &[Key::Tab]);
        }
    }
    a.set_cpus("1000-1151").unwrap();
    let out = render(&mut a, 80, 24);
    assert_eq!(header_cpus(&out[1]).first(), Some(&1000));
}

#[test]
fn colour_marks_intensity_only_when_enabled() {
    use ratatui::style::Color;
    let fg_of = |color: bool| {
        let mut a = medium();
        a.color = color;
        a.update(Msg::Resize(80, 24));
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| view::draw(f, &a)).unwrap();
        t.backend()
            .buffer()
            .content
            .iter()
            .map(|c| c.fg)
            .collect::<std::collections::HashSet<_>>()
    };
    let coloured = fg_of(true);
    assert!(coloured.contains(&Color::Red) && coloured.contains(&Color::Yellow));
    let plain = fg_of(false);
    assert_eq!(plain.into_iter().collect::<Vec<_>>(), vec![Color::Reset]);
}

/// `top --trace`: fake traced time on the small machine (see
/// `trace::top::fake`: IRQ 24 of two actions, LOC, NET_RX, TIMER on
/// CPUs 0 and 1).
fn traced() -> App {
    app_with(fixtures::traced_sample())
}

#[test]
fn traced_irqs_100x24() {
    insta::assert_snapshot!(text(&mut traced(), 100, 24));
}

#[test]
fn traced_softirqs_100x24() {
    let mut a = traced();
    press(&mut a, &[Key::Tab]);
    insta::assert_snapshot!(text(&mut a, 100, 24));
}

#[test]
fn traced_cpu_time_100x24() {
    let mut a = traced();
    press(&mut a, &[Key::Tab, Key::Tab]);
    insta::assert_snapshot!(text(&mut a, 100, 24));
}

#[test]
fn traced_columns_only_with_traced_data() {
    let plain = text(&mut app_with(fixtures::small_sample()), 100, 24);
    assert!(
        !plain.contains("µs/s") && !plain.contains("traced:"),
        "{plain}"
    );
    let t = text(&mut traced(), 100, 24);
    assert!(t.contains("µs/s"), "{t}");
    let foot = t.lines().find(|l| l.contains("traced:")).unwrap();
    assert!(
        foot.contains("irq 0.22% softirq 0.98% of all CPUs") && foot.contains("NET_RX 19000 µs/s"),
        "{foot}"
    );
    assert!(!foot.contains("not traced"), "{foot}");
    let mut missing = fixtures::traced_sample();
    if let Some(t) = missing.trace.as_mut() {
        t.dropped = 1;
        t.missed = [("RES".to_string(), 2)].into();
    }
    let t = text(&mut app_with(missing), 100, 24);
    let foot = t.lines().find(|l| l.contains("traced:")).unwrap();
    assert!(
        foot.contains("of all CPUs (3 runs not traced) │ NET_RX"),
        "{foot}"
    );
    // tiny terminals still fit
    for (w, h) in [(20, 5), (40, 8)] {
        render(&mut traced(), w, h);
    }
}

/// A tree's device text reaches the terminal with its control
/// characters escaped (`\xNN`), never as raw ESC/BEL bytes.
#[test]
fn control_characters_of_a_device_are_escaped() {
    let mut s = fixtures::sample(4, 8);
    let rows = &mut s.report.interrupts.as_mut().unwrap().rows;
    let r = rows.iter_mut().find(|r| r.irq.is_some()).unwrap();
    r.actions = vec!["\x1b]0;pwned\x07evil".to_string()];
    let out = text(&mut app_with(s), 200, 30);
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out}");
    assert!(out.contains("\\x1b]0;pwned\\x07evil"), "{out}");
}
