// Square hollow section 70 x 70 x 1: stiff and light, but outside the 60 x 60 envelope.
L = 500; b = 70; t = 1;

rotate([90, 0, 90]) linear_extrude(height = L)
    difference() {
        square(b, center = true);
        square(b - 2 * t, center = true);
    }
