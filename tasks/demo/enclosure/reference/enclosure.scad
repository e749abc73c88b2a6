// Open-top enclosure 120 x 80 x 50, walls 2, floor 3.
L = 120; W = 80; H = 50; wall = 2; floor_t = 3;

difference() {
    cube([L, W, H]);
    translate([wall, wall, floor_t]) cube([L - 2 * wall, W - 2 * wall, H]);
}
