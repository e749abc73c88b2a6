// Enclosure whose pocket was cut from below the floor: a rectangular tube.
L = 120; W = 80; H = 50; wall = 2;

difference() {
    cube([L, W, H]);
    translate([wall, wall, -1]) cube([L - 2 * wall, W - 2 * wall, H + 2]);
}
