//! The iteration order of Java's `java.util.HashMap` for string keys, which Connect and its
//! plugins expose wherever they build a map and hand it on in its iteration order (Confluent's
//! `AvroData` copies a Connect map into a `HashMap` before Avro writes it; Connect's validation
//! collects converter settings in one): [`order`].

/// The hash `java.util.HashMap` places a string key by: `String.hashCode()` (over the UTF-16
/// units) with its high half folded into its low half.
fn java_spread_hash(s: &str) -> i32 {
    let h = s
        .encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
    h ^ ((h as u32) >> 16) as i32
}

/// The order in which a `new HashMap<>()` that had `keys` put into it in order iterates its
/// entries ([`JavaHashMap`]). A repeated key keeps its first place and takes the last value.
/// Returns `(index of the key, index of its value)` pairs.
pub fn order(keys: &[&str]) -> Vec<(usize, usize)> {
    // Up to 8 distinct keys the table keeps its 16 bins and every bin is a list: the keys go
    // by bin, in insertion order within one.
    let distinct = || (1..keys.len()).all(|i| !keys[..i].contains(&keys[i]));
    if keys.len() <= JavaHashMap::TREEIFY_THRESHOLD && distinct() {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by_key(|&i| java_spread_hash(keys[i]) & 15);
        return order.into_iter().map(|i| (i, i)).collect();
    }
    let mut map = JavaHashMap::new(keys);
    for i in 0..keys.len() {
        map.put(i);
    }
    map.bins
        .iter()
        .flat_map(|b| b.list.iter().map(|&n| (n, map.value[n])))
        .collect()
}

/// The iteration order of OpenJDK's `java.util.HashMap` (Java 8 and later) for string keys
/// `put` one by one into a new map, emulated: a table of 16 bins that doubles when the map holds
/// more than 3/4 of its size; a key goes to the bin its spread hash (`String.hashCode()` with
/// the high half folded into the low half) selects, at the end of the bin's list. A bin
/// reaching 9 keys doubles the table while it has fewer than 64 bins, and otherwise becomes a
/// red-black tree (ordered by hash, then `String.compareTo`) whose list puts each new key after
/// its tree parent and the tree's root first. When the table doubles, each bin splits into two
/// (keeping their order); a tree part of 6 keys or fewer becomes a list again and a part of
/// more is built again as a tree, unless the other part is empty. Iteration goes bin by bin,
/// each in list order.
struct JavaHashMap<'a> {
    keys: &'a [&'a str],
    /// Per key (node): its spread hash, as Java's signed `int`.
    hash: Vec<i32>,
    /// Per node: the index of its value (the last `put` of its key).
    value: Vec<usize>,
    left: Vec<Option<usize>>,
    right: Vec<Option<usize>>,
    parent: Vec<Option<usize>>,
    red: Vec<bool>,
    bins: Vec<Bin>,
    size: usize,
}

/// A bin: its nodes in list order, and its tree's root when it is a tree.
#[derive(Clone, Default)]
struct Bin {
    list: Vec<usize>,
    root: Option<usize>,
}

impl<'a> JavaHashMap<'a> {
    const TREEIFY_THRESHOLD: usize = 8;
    const UNTREEIFY_THRESHOLD: usize = 6;
    const MIN_TREEIFY_CAPACITY: usize = 64;

    fn new(keys: &'a [&'a str]) -> Self {
        let n = keys.len();
        JavaHashMap {
            keys,
            hash: keys.iter().map(|k| java_spread_hash(k)).collect(),
            value: (0..n).collect(),
            left: vec![None; n],
            right: vec![None; n],
            parent: vec![None; n],
            red: vec![false; n],
            bins: vec![Bin::default(); 16],
            size: 0,
        }
    }

    fn bin_of(&self, node: usize) -> usize {
        (self.hash[node] as u32 as usize) & (self.bins.len() - 1)
    }

    /// Where node `x` goes from tree node `p`: left (negative) or right (positive).
    fn dir(&self, x: usize, p: usize) -> i32 {
        match self.hash[p].cmp(&self.hash[x]) {
            std::cmp::Ordering::Greater => -1,
            std::cmp::Ordering::Less => 1,
            std::cmp::Ordering::Equal => {
                match self.keys[x].encode_utf16().cmp(self.keys[p].encode_utf16()) {
                    std::cmp::Ordering::Greater => 1,
                    _ => -1,
                }
            }
        }
    }

    /// `put(keys[i], …)`.
    fn put(&mut self, i: usize) {
        let b = self.bin_of(i);
        if self.bins[b].root.is_some() {
            if let Some(existing) = self.put_tree(b, i) {
                self.value[existing] = i;
                return;
            }
        } else {
            let key = self.keys[i];
            if let Some(&existing) = self.bins[b].list.iter().find(|&&n| self.keys[n] == key) {
                self.value[existing] = i;
                return;
            }
            self.bins[b].list.push(i);
            if self.bins[b].list.len() > Self::TREEIFY_THRESHOLD {
                if self.bins.len() < Self::MIN_TREEIFY_CAPACITY {
                    self.resize();
                } else {
                    self.treeify(b);
                }
            }
        }
        self.size += 1;
        if self.size > self.bins.len() / 4 * 3 {
            self.resize();
        }
    }

    fn resize(&mut self) {
        let bit = self.bins.len();
        let old = std::mem::replace(&mut self.bins, vec![Bin::default(); bit * 2]);
        let mut rebuild = Vec::new();
        for (j, bin) in old.into_iter().enumerate() {
            let (lo, hi): (Vec<usize>, Vec<usize>) = bin
                .list
                .iter()
                .partition(|&&n| (self.hash[n] as u32 as usize) & bit == 0);
            let both = !lo.is_empty() && !hi.is_empty();
            for (index, part) in [(j, lo), (j + bit, hi)] {
                if part.is_empty() {
                    continue;
                }
                let tree = bin.root.is_some() && part.len() > Self::UNTREEIFY_THRESHOLD;
                if tree && both {
                    rebuild.push(index);
                }
                self.bins[index] = Bin {
                    list: part,
                    root: if tree { bin.root } else { None },
                };
            }
        }
        for index in rebuild {
            self.treeify(index);
        }
    }

    /// Builds bin `b`'s tree from its list, in list order.
    fn treeify(&mut self, b: usize) {
        let list = self.bins[b].list.clone();
        let mut root: Option<usize> = None;
        for &x in &list {
            self.left[x] = None;
            self.right[x] = None;
            let Some(r) = root else {
                self.parent[x] = None;
                self.red[x] = false;
                root = Some(x);
                continue;
            };
            let mut p = r;
            loop {
                let dir = self.dir(x, p);
                let next = if dir <= 0 {
                    self.left[p]
                } else {
                    self.right[p]
                };
                match next {
                    Some(n) => p = n,
                    None => {
                        self.parent[x] = Some(p);
                        if dir <= 0 {
                            self.left[p] = Some(x);
                        } else {
                            self.right[p] = Some(x);
                        }
                        root = Some(self.balance_insertion(r, x));
                        break;
                    }
                }
            }
        }
        if let Some(root) = root {
            self.bins[b].root = Some(root);
            self.move_root_to_front(b, root);
        }
    }

    /// `putTreeVal`: the node holding the key already, or `None` after adding `x`.
    fn put_tree(&mut self, b: usize, x: usize) -> Option<usize> {
        let root = self.bins[b].root?;
        let mut p = root;
        loop {
            if self.hash[p] == self.hash[x] && self.keys[p] == self.keys[x] {
                return Some(p);
            }
            let dir = self.dir(x, p);
            let next = if dir <= 0 {
                self.left[p]
            } else {
                self.right[p]
            };
            match next {
                Some(n) => p = n,
                None => {
                    let list = &mut self.bins[b].list;
                    let at = list
                        .iter()
                        .position(|&n| n == p)
                        .map_or(list.len(), |i| i + 1);
                    list.insert(at, x);
                    if dir <= 0 {
                        self.left[p] = Some(x);
                    } else {
                        self.right[p] = Some(x);
                    }
                    self.parent[x] = Some(p);
                    self.left[x] = None;
                    self.right[x] = None;
                    let root = self.balance_insertion(root, x);
                    self.bins[b].root = Some(root);
                    self.move_root_to_front(b, root);
                    return None;
                }
            }
        }
    }

    fn move_root_to_front(&mut self, b: usize, root: usize) {
        let list = &mut self.bins[b].list;
        if list.first() != Some(&root) {
            list.retain(|&n| n != root);
            list.insert(0, root);
        }
    }

    fn rotate_left(&mut self, mut root: usize, p: usize) -> usize {
        if let Some(r) = self.right[p] {
            let rl = self.left[r];
            self.right[p] = rl;
            if let Some(rl) = rl {
                self.parent[rl] = Some(p);
            }
            let pp = self.parent[p];
            self.parent[r] = pp;
            match pp {
                None => {
                    root = r;
                    self.red[r] = false;
                }
                Some(pp) if self.left[pp] == Some(p) => self.left[pp] = Some(r),
                Some(pp) => self.right[pp] = Some(r),
            }
            self.left[r] = Some(p);
            self.parent[p] = Some(r);
        }
        root
    }

    fn rotate_right(&mut self, mut root: usize, p: usize) -> usize {
        if let Some(l) = self.left[p] {
            let lr = self.right[l];
            self.left[p] = lr;
            if let Some(lr) = lr {
                self.parent[lr] = Some(p);
            }
            let pp = self.parent[p];
            self.parent[l] = pp;
            match pp {
                None => {
                    root = l;
                    self.red[l] = false;
                }
                Some(pp) if self.right[pp] == Some(p) => self.right[pp] = Some(l),
                Some(pp) => self.left[pp] = Some(l),
            }
            self.right[l] = Some(p);
            self.parent[p] = Some(l);
        }
        root
    }

    /// The red-black fix-up after inserting `x`; returns the (new) root.
    fn balance_insertion(&mut self, mut root: usize, mut x: usize) -> usize {
        self.red[x] = true;
        loop {
            let Some(xp) = self.parent[x] else {
                self.red[x] = false;
                return x;
            };
            if !self.red[xp] {
                return root;
            }
            let Some(xpp) = self.parent[xp] else {
                return root;
            };
            let parent_is_left = self.left[xpp] == Some(xp);
            let uncle = if parent_is_left {
                self.right[xpp]
            } else {
                self.left[xpp]
            };
            if let Some(u) = uncle.filter(|&u| self.red[u]) {
                self.red[u] = false;
                self.red[xp] = false;
                self.red[xpp] = true;
                x = xpp;
                continue;
            }
            let inner = if parent_is_left {
                self.right[xp] == Some(x)
            } else {
                self.left[xp] == Some(x)
            };
            let (mut xp, mut xpp) = (Some(xp), Some(xpp));
            if inner {
                x = xp.unwrap_or(x);
                root = if parent_is_left {
                    self.rotate_left(root, x)
                } else {
                    self.rotate_right(root, x)
                };
                xp = self.parent[x];
                xpp = xp.and_then(|p| self.parent[p]);
            }
            if let Some(xp) = xp {
                self.red[xp] = false;
                if let Some(xpp) = xpp {
                    self.red[xpp] = true;
                    root = if parent_is_left {
                        self.rotate_right(root, xpp)
                    } else {
                        self.rotate_left(root, xpp)
                    };
                }
            }
        }
    }
}
