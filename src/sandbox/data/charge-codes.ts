// Charge codes, the one standard used across the platform, in two dated versions. The later
// version adds a few codes, retires a few and rewords a few descriptions.
import type { Entry } from '../types.ts';

export const CHARGE_CODE_VERSION_2024 = '2024-06-11';
export const CHARGE_CODE_VERSION_2025 = '2025-09-01';

type Row = [code: string, description: string, category: string];

const v2024: Row[] = [
  ['LHL', 'Linehaul', 'linehaul'],
  ['FSC', 'Fuel Surcharge', 'fuel'],
  ['SOC', 'Stop Off Charge', 'accessorial'],
  ['CLN', 'Trailer Cleaning', 'accessorial'],
  ['VOR', 'Vehicle Ordered Not Used', 'accessorial'],
  ['LFT', 'Liftgate Service', 'accessorial'],
  ['RES', 'Residential Delivery', 'accessorial'],
  ['INS', 'Insurance', 'other'],
  ['HAZ', 'Hazardous Materials Surcharge', 'accessorial'],
  ['DET', 'Detention', 'accessorial'],
  ['DTL', 'Detention With Power', 'accessorial'],
  ['DTW', 'Detention Without Power', 'accessorial'],
  ['LAY', 'Layover', 'accessorial'],
  ['TON', 'Truck Order Not Used', 'accessorial'],
  ['LUM', 'Lumper Fee', 'accessorial'],
  ['IDL', 'Inside Delivery', 'accessorial'],
  ['IPU', 'Inside Pickup', 'accessorial'],
  ['APT', 'Appointment Fee', 'accessorial'],
  ['NOA', 'Notify Before Arrival', 'accessorial'],
  ['LAD', 'Limited Access Delivery', 'accessorial'],
  ['LAP', 'Limited Access Pickup', 'accessorial'],
  ['CSD', 'Construction Site Delivery', 'accessorial'],
  ['TRD', 'Trade Show Delivery', 'accessorial'],
  ['SAT', 'Saturday Service', 'accessorial'],
  ['SRT', 'Sort and Segregate', 'accessorial'],
  ['PFZ', 'Protect From Freezing', 'accessorial'],
  ['RDL', 'Redelivery', 'accessorial'],
  ['RCN', 'Reconsignment', 'accessorial'],
  ['COD', 'Collect On Delivery Fee', 'other'],
  ['BOL', 'Bill of Lading Correction', 'administrative'],
  ['RWT', 'Reweigh', 'administrative'],
  ['RCL', 'Reclassification', 'administrative'],
  ['STO', 'Storage', 'accessorial'],
  ['CHS', 'Chassis Usage', 'drayage'],
  ['PPC', 'Pre-Pull Charge', 'drayage'],
  ['PRT', 'Port Congestion Fee', 'drayage'],
  ['DEM', 'Demurrage', 'drayage'],
  ['ESC', 'Escort Service', 'accessorial'],
  ['PMT', 'Permit Fee', 'administrative'],
  ['TLL', 'Tolls', 'other'],
  ['OVD', 'Over Dimension', 'accessorial'],
  ['TMP', 'Temperature Control', 'accessorial'],
  ['CUS', 'Customs Clearance', 'administrative'],
  ['MSC', 'Miscellaneous', 'other'],
];

const retiredIn2025 = new Set(['TON', 'DTW', 'NOA']);
const rewordedIn2025: Record<string, string> = {
  DET: 'Detention at Stop',
  SOC: 'Additional Stop Charge',
  LUM: 'Lumper Service Fee',
  FSC: 'Fuel Surcharge (Index Based)',
};
const addedIn2025: Row[] = [
  ['EVC', 'Electric Vehicle Charging Surcharge', 'fuel'],
  ['CSS', 'Cross-Border Security Surcharge', 'administrative'],
  ['TWP', 'Two Person Delivery', 'accessorial'],
  ['WGS', 'White Glove Service', 'accessorial'],
  ['CRB', 'Carbon Offset', 'other'],
];

// Miscellaneous is kept for old invoices but no longer billed.
const inactive = new Set(['MSC']);

function entries(rows: Row[]): Entry[] {
  return rows.map(([code, description, category]) => ({ code, description, category, is_active: !inactive.has(code) }));
}

/** The bundled versions, oldest first. */
export function chargeCodesByVersion(): Map<string, Entry[]> {
  const later: Row[] = [...v2024.filter(([code]) => !retiredIn2025.has(code)).map(([code, d, c]): Row => [code, rewordedIn2025[code] ?? d, c]), ...addedIn2025];
  return new Map([
    [CHARGE_CODE_VERSION_2024, entries(v2024)],
    [CHARGE_CODE_VERSION_2025, entries(later)],
  ]);
}
