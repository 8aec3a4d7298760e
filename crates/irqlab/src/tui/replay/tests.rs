use super::*;
use crate::record::playback::fixtures::{shape, step};
use std::sync::mpsc::RecvTimeoutError;

/// LOC: 100, 300, 1300, 1400 at 1 s steps (rates 200, 1000, 100).
fn player() -> Player {
    let steps: Arc<[RecordedSample]> = vec![
        step(0, 100, 0, Some(shape())),
        step(1, 300, 0, None),
        step(2, 1300, 0, None),
        step(3, 1400, 0, None),
    ]
    .into();
    Player::new(steps, "rec".into(), Filter::default()).unwrap()
}

/// The LOC rate and the position line of a frame's messages.
fn seen(msgs: Option<Vec<Msg>>) -> (Option<f64>, String) {
    let mut rate = None;
    let mut why = String::new();
    for m in msgs.unwrap() {
        match m {
            Msg::Sample(s) => {
                let rows = &s.report.interrupts.as_ref().unwrap().rows;
                rate = rows.iter().find(|r| r.label == "LOC").unwrap().total_rate;
            }
            Msg::Why(w) => why = w,
            _ => {}
        }
    }
    (rate, why)
}

#[test]
fn plays_steps_and_jumps_with_rates_of_the_same_frames() {
    let mut p = player();
    assert_eq!(p.frames(), 3);
    let (rate, why) = seen(p.advance().unwrap());
    assert_eq!((rate, p.pos()), (Some(200.0), 1));
    assert!(
        why.contains("sample 1/3") && why.contains("PLAYING"),
        "{why}"
    );
    assert_eq!(p.wait(), Some(Duration::from_secs(1)));
    let (rate, why) = seen(p.command(Cmd::Step(1)).unwrap());
    assert_eq!((rate, p.pos()), (Some(1000.0), 2));
    assert!(why.contains("PAUSED"), "a step pauses: {why}");
    let (rate, _) = seen(p.command(Cmd::Step(-1)).unwrap());
    assert_eq!((rate, p.pos()), (Some(200.0), 1), "back: the same rate");
    let (rate, why) = seen(p.command(Cmd::Seconds(60)).unwrap());
    assert_eq!((rate, p.pos()), (Some(100.0), 3), "clamped to the end");
    assert!(why.contains("END"), "{why}");
    // 3 frames: 70 % is frame 2 (3 * 7 / 10)
    let (rate, _) = seen(p.command(Cmd::Tenth(7)).unwrap());
    assert_eq!((rate, p.pos()), (Some(1000.0), 2));
    let (rate, _) = seen(p.command(Cmd::Seconds(-60)).unwrap());
    assert_eq!((rate, p.pos()), (Some(200.0), 1), "clamped to the start");
    seen(p.command(Cmd::Tenth(9)).unwrap());
    assert_eq!(p.pos(), 2);
}

#[test]
fn speed_pause_and_end_of_recording() {
    let mut p = player();
    seen(p.advance().unwrap());
    let (_, why) = seen(p.command(Cmd::Faster).unwrap());
    assert!(why.contains("x2"), "{why}");
    assert_eq!(p.wait(), Some(Duration::from_millis(500)));
    seen(p.command(Cmd::Slower).unwrap());
    seen(p.command(Cmd::Slower).unwrap());
    assert_eq!(p.wait(), Some(Duration::from_secs(2)));
    let (_, why) = seen(p.command(Cmd::Toggle).unwrap());
    assert!(!p.playing && why.contains("PAUSED"), "{why}");
    p.command(Cmd::Toggle).unwrap();
    seen(p.advance().unwrap());
    seen(p.advance().unwrap());
    assert_eq!(p.pos(), 3);
    let (_, why) = seen(p.advance().unwrap());
    assert!(!p.playing && why.contains("END"), "{why}");
    assert!(p.advance().unwrap().is_none(), "said once");
    let (rate, why) = seen(p.command(Cmd::Toggle).unwrap());
    assert_eq!(
        (rate, p.pos()),
        (Some(200.0), 1),
        "space at the end restarts"
    );
    assert!(p.playing && why.contains("PLAYING"), "{why}");
    assert!(Player::new(
        vec![step(0, 1, 0, Some(shape()))].into(),
        "one".into(),
        Filter::default()
    )
    .is_err());
}

#[test]
fn navigation_keys_only_outside_prompts_and_help() {
    let mut app = App::new(Duration::from_secs(1), false);
    let key = |c| Msg::Key(Key::Char(c));
    assert!(matches!(replay_key(&app, &key(' ')), Some(Cmd::Toggle)));
    assert!(matches!(replay_key(&app, &key('.')), Some(Cmd::Step(1))));
    assert!(matches!(replay_key(&app, &key(',')), Some(Cmd::Step(-1))));
    assert!(matches!(
        replay_key(&app, &key('>')),
        Some(Cmd::Seconds(60))
    ));
    assert!(matches!(replay_key(&app, &key('3')), Some(Cmd::Tenth(3))));
    assert!(replay_key(&app, &key('q')).is_none(), "the App's keys pass");
    app.update(key('/'));
    assert!(app.input.is_some());
    assert!(
        replay_key(&app, &key(' ')).is_none(),
        "a prompt gets its text"
    );
}

/// The `?` help names exactly the keys `replay_key` takes (`space` for
/// ' ', `0-9` for the digits), in its 14-wide key column.
#[test]
fn the_help_names_every_navigation_key() {
    let app = App::new(Duration::from_secs(1), false);
    let taken: std::collections::BTreeSet<char> = (' '..='~')
        .filter(|&c| replay_key(&app, &Msg::Key(Key::Char(c))).is_some())
        .collect();
    let mut named = std::collections::BTreeSet::new();
    for l in HELP_KEYS {
        let (keys, what) = l.split_at(14);
        assert!(keys.ends_with(' ') && !what.starts_with(' '), "{l:?}");
        for k in keys.split_whitespace() {
            let k = if k.len() > 1 {
                k.trim_end_matches(',')
            } else {
                k
            };
            match k {
                "space" => named.insert(' '),
                "0-9" => {
                    named.extend('0'..='9');
                    true
                }
                _ => {
                    assert_eq!(k.chars().count(), 1, "{k:?} in {l:?}");
                    named.extend(k.chars());
                    true
                }
            };
        }
    }
    assert_eq!(named, taken);
}

/// The replay screen's footer shows the App's status line, the position
/// line and the key help together, from the first frame on, also 100
/// columns wide (the key help used to replace all of them at the start).
#[test]
fn status_position_and_keys_are_all_on_the_screen() {
    use ratatui::backend::TestBackend;
    let mut app = App::new(Duration::from_secs(1), false);
    app.verbose = true;
    for m in player().advance().unwrap().unwrap() {
        app.update(m);
    }
    app.update(Msg::Resize(100, 30));
    let mut t = ratatui::Terminal::new(TestBackend::new(100, 30)).unwrap();
    t.draw(|f| super::super::view::draw(f, &app)).unwrap();
    let screen: Vec<String> = t
        .backend()
        .buffer()
        .content
        .chunks(100)
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect();
    let has = |what: &str| screen.iter().any(|l| l.contains(what));
    assert!(has(" every 1s"), "the status line: {screen:#?}");
    assert!(has("│ sample 1/3 │ PLAYING x1 │ rec"), "{screen:#?}");
    assert!(has(HELP), "the key help: {screen:#?}");
}

/// The App's status line says the player's state (it said `running`
/// whether the replay played, was paused or had ended).
#[test]
fn the_status_line_says_the_player_s_state() {
    let mut app = App::new(Duration::from_secs(1), false);
    let mut p = player();
    let mut state = |msgs: Option<Vec<Msg>>| {
        for m in msgs.unwrap() {
            app.update(m);
        }
        let s = super::super::view::status_text(&app);
        assert!(!s.contains("running"), "{s}");
        ["PLAYING", "PAUSED", "END"]
            .into_iter()
            .filter(|w| s.contains(&format!("│ {w} │")))
            .collect::<Vec<_>>()
    };
    assert_eq!(state(p.advance().unwrap()), ["PLAYING"]);
    assert_eq!(state(p.command(Cmd::Toggle).unwrap()), ["PAUSED"]);
    assert_eq!(state(p.command(Cmd::Seconds(60)).unwrap()), ["END"]);
}

/// The positions the player thread sent, until `until` says stop or
/// nothing comes for a while.
fn positions(rx: &Receiver<Msg>, mut until: impl FnMut(&str) -> bool) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(m) = rx.recv_timeout(Duration::from_secs(10)) {
        if let Msg::Why(w) = m {
            let done = until(&w);
            seen.push(w);
            if done {
                break;
            }
        }
    }
    seen
}

/// The player thread, driven by its variable-interval pace: plays every
/// frame at the speed to the end (said once), restarts from the start on
/// space, pauses on a step, and ends on the stop flag (its sender is
/// dropped).
#[test]
fn the_player_thread_plays_to_the_end_restarts_and_ends_on_the_stop_flag() {
    let mut p = player();
    p.speed = 1024.0; // 1 s steps: about 1 ms each
    let (tx, rx) = std::sync::mpsc::channel();
    let (cmd_tx, cmd_rx) = std::sync::mpsc::channel();
    let stop = Stop::install().unwrap();
    spawn(p, tx, cmd_rx, stop.clone());
    let seen = positions(&rx, |w| w.contains("END"));
    let frames: Vec<_> = seen.iter().filter_map(|w| w.split(" │ ").nth(2)).collect();
    assert_eq!(
        frames,
        ["sample 1/3", "sample 2/3", "sample 3/3"],
        "{seen:?}"
    );
    // the end is said again once, when playback stops
    let end = positions(&rx, |_| true);
    assert!(end[0].contains("sample 3/3 │ END"), "{end:?}");
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "nothing after the end"
    );
    cmd_tx.send(Cmd::Toggle).unwrap();
    let again = positions(&rx, |w| w.contains("sample 1/3"));
    assert!(again.last().unwrap().contains("PLAYING"), "{again:?}");
    // a step back from wherever playback got to: paused, not at the end
    cmd_tx.send(Cmd::Step(-1)).unwrap();
    let paused = positions(&rx, |w| w.contains("PAUSED"));
    assert!(paused.last().unwrap().contains("PAUSED"), "{paused:?}");
    stop.request();
    loop {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e, RecvTimeoutError::Disconnected, "the thread ended");
                break;
            }
        }
    }
}

/// Frames never come sooner than the recorded interval over the speed,
/// from the start and after a navigation re-anchors the pace (the pace
/// divides the recorded interval by the speed once: frame 3 of steps
/// 100 ms apart at x2 is due 100 ms after frame 1).
#[test]
fn frames_come_no_sooner_than_the_recorded_interval_over_the_speed() {
    let steps: Arc<[RecordedSample]> = (0..4u64)
        .map(|k| {
            let mut s = step(k, 100 * (k + 1), 0, (k == 0).then(shape));
            s.time.mono_ns = k * 100_000_000;
            s
        })
        .collect::<Vec<_>>()
        .into();
    let mut p = Player::new(steps, "rec".into(), Filter::default()).unwrap();
    p.speed = 2.0;
    assert_eq!(p.interval(), Some(Duration::from_millis(100)));
    assert_eq!(p.wait(), Some(Duration::from_millis(50)));
    let (tx, rx) = std::sync::mpsc::channel();
    let (cmd_tx, cmd_rx) = std::sync::mpsc::channel();
    let stop = Stop::install().unwrap();
    let t0 = std::time::Instant::now();
    spawn(p, tx, cmd_rx, stop.clone());
    positions(&rx, |w| w.contains("sample 3/3"));
    let first = t0.elapsed();
    positions(&rx, |_| true); // the END said when playback stops
    let t1 = std::time::Instant::now();
    cmd_tx.send(Cmd::Toggle).unwrap(); // restart from frame 1
    positions(&rx, |w| w.contains("sample 3/3"));
    let again = t1.elapsed();
    stop.request();
    let gap = Duration::from_millis(100);
    assert!(first >= gap && again >= gap, "{first:?} {again:?}");
}

/// The filter flags' warnings are about the recording's first sample
/// (the player's baseline), as `replay --batch` warns.
#[test]
fn warnings_are_about_the_first_sample() {
    use crate::filter::warnings::snapshot_warnings;
    let irq = Some("nomatch");
    let p = Player::new(
        player().steps,
        "rec".into(),
        Filter::from_flags(irq, None).unwrap(),
    )
    .unwrap();
    let warnings =
        |snap: &irqlab_core::Snapshot, rows: &Filter| snapshot_warnings(None, irq, snap, rows);
    assert_eq!(
        p.first_warnings(&warnings),
        ["irqlab: warning: --irq \"nomatch\" matches no interrupt row"]
    );
    let all =
        |snap: &irqlab_core::Snapshot, rows: &Filter| snapshot_warnings(None, None, snap, rows);
    assert!(player().first_warnings(&all).is_empty());
}
