// Enclosure with the cavity sealed in (pocket stops 3 mm below the top).
L = 120; W = 80; H = 50; wall = 2; floor_t = 3;

difference() {
    cube([L, W, H]);
    translate([wall, wall, floor_t]) cube([L - 2 * wall, W - 2 * wall, H - 2 * floor_t]);
}
