//! `assertscope explain` on logs that users posted in public threads
//! (tests/fixtures/public): many projects, PyTorch 0.3 to 2.x, every way of pasting. The
//! share of logs whose root cause and user frame come out right must stay at the bars
//! (`cargo test --test explain_public -- --nocapture` prints the score and the misses).

#[path = "explain_support/labelled.rs"]
mod labelled;

use labelled::{explain_file, Score};

#[test]
fn public_logs_get_their_cause_and_user_frame() {
    let logs = labelled::set("public");
    let score = Score::of(&logs, |log| Some(explain_file(&log.path)));
    for miss in score.misses() {
        println!("miss {}", miss.miss_line());
    }
    let (total, causes, frames) = (score.total(), score.causes(), score.frames());
    println!("public logs: cause {causes}/{total}, frame {frames}/{total}");
    assert!(total >= 40, "the public set holds only {total} logs");
    // The bars are what the set reaches: every cause and every frame.
    assert_eq!(causes, total, "cause right on {causes} of {total}");
    assert_eq!(frames, total, "frame right on {frames} of {total}");
}
