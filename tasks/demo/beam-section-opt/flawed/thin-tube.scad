// Square hollow section 60 x 60 x 1, 500 long along x.
L = 500; b = 60; t = 1;

rotate([90, 0, 90]) linear_extrude(height = L)
    difference() {
        square(b, center = true);
        square(b - 2 * t, center = true);
    }
