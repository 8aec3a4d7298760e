//! The order of the variants, whose first is the default baseline: the
//! order of the arguments and, inside one, of the files found; but when
//! every variant comes from bench runs of one plan (`plan.json`
//! `variants`, e.g. `tip` then `patch`), the plan's order, whatever the
//! directory names or the arguments' order. Specified in
//! `docs/compare-input.md` ("Order and baseline").

use super::input::VariantData;
use serde_json::Value;

/// A variant's place in its bench plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRank {
    /// The plan's variants, in order.
    pub variants: Vec<String>,
    /// The variant's index among them.
    pub index: usize,
}

/// The place of `variant` in `plan`, when the plan lists it.
pub fn rank(plan: Option<&Value>, variant: &str) -> Option<PlanRank> {
    let variants: Vec<String> = plan?["variants"]
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    let index = variants.iter().position(|v| v == variant)?;
    Some(PlanRank { variants, index })
}

/// Put `variants` in their plan's order when they all come from one plan
/// (the same list of variants); a note names the order when it differs
/// from the arguments'.
pub fn by_plan(variants: &mut [VariantData], warns: &mut Vec<String>) {
    let Some(first) = variants.first().and_then(|v| v.plan_rank.clone()) else {
        return;
    };
    let same = variants.iter().all(|v| {
        v.plan_rank
            .as_ref()
            .is_some_and(|r| r.variants == first.variants)
    });
    if !same {
        return;
    }
    let was: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
    variants.sort_by_key(|v| v.plan_rank.as_ref().map_or(0, |r| r.index));
    if variants.iter().zip(&was).any(|(v, w)| v.label != *w) {
        let now: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
        warns.push(format!(
            "variants in the order of their bench plan ({}): {}; the baseline is {} \
             unless --baseline names another",
            first.variants.join(", "),
            now.join(", "),
            now[0]
        ));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn variant(label: &str, plan: &Value, name: &str) -> VariantData {
        let mut v = VariantData::new(label, true);
        v.plan_rank = rank(Some(plan), name);
        v
    }

    #[test]
    fn one_plan_orders_the_variants() {
        let plan = json!({"variants": ["tip", "patch"]});
        let mut vs = vec![
            variant("patch", &plan, "patch"),
            variant("tip", &plan, "tip"),
        ];
        let mut w = Vec::new();
        by_plan(&mut vs, &mut w);
        assert_eq!(vs[0].label, "tip");
        assert_eq!(
            w,
            [
                "variants in the order of their bench plan (tip, patch): tip, patch; the \
              baseline is tip unless --baseline names another"
            ]
        );
        // Labels given with LABEL= keep their plan's place.
        let mut vs = vec![variant("new", &plan, "patch"), variant("old", &plan, "tip")];
        by_plan(&mut vs, &mut Vec::new());
        assert_eq!(vs[0].label, "old");
    }

    #[test]
    fn two_plans_or_a_variant_without_one_keep_the_arguments_order() {
        let a = json!({"variants": ["tip", "patch"]});
        let b = json!({"variants": ["patch", "tip"]});
        let mut vs = vec![variant("patch", &a, "patch"), variant("tip", &b, "tip")];
        by_plan(&mut vs, &mut Vec::new());
        assert_eq!(vs[0].label, "patch");
        let mut vs = vec![
            variant("patch", &a, "patch"),
            VariantData::new("tip", false),
        ];
        let mut w = Vec::new();
        by_plan(&mut vs, &mut w);
        assert_eq!(vs[0].label, "patch");
        assert!(w.is_empty());
        assert_eq!(rank(Some(&a), "other"), None);
    }
}
