// Pickup and delivery accessorials. `is_charge_code`: the code is also a charge code.
import type { Entry } from '../types.ts';

type Row = [code: string, description: string, longDescription: string, stopType: 'pickup' | 'delivery' | 'both', isChargeCode: boolean];

const rows: Row[] = [
  ['APPTDEL', 'Appointment Delivery', 'Carrier must schedule a delivery appointment with the consignee before arrival.', 'delivery', true],
  ['APPTPU', 'Appointment Pickup', 'Carrier must schedule a pickup appointment with the shipper before arrival.', 'pickup', true],
  ['CNVDEL', 'Convention Delivery', 'Delivery to a convention center, exhibition hall or trade show.', 'delivery', true],
  ['CNVPU', 'Convention Pickup', 'Pickup from a convention center, exhibition hall or trade show.', 'pickup', true],
  ['CONDEL', 'Construction Site Delivery', 'Delivery to a construction site with limited or unpaved access.', 'delivery', true],
  ['CONPU', 'Construction Site Pickup', 'Pickup from a construction site with limited or unpaved access.', 'pickup', true],
  ['DRAYDEL', 'Drayage Delivery', 'Delivery of a container from a port or rail ramp.', 'delivery', false],
  ['FARMDEL', 'Farm Delivery', 'Delivery to a farm, ranch or agricultural location.', 'delivery', true],
  ['GOVDEL', 'Government Site Delivery', 'Delivery to a government or military site requiring security clearance.', 'delivery', true],
  ['GOVPU', 'Government Site Pickup', 'Pickup from a government or military site requiring security clearance.', 'pickup', true],
  ['HAZM', 'Hazardous Materials', 'Shipment contains hazardous materials requiring placards and documentation.', 'both', true],
  ['HOSDEL', 'Hospital Delivery', 'Delivery to a hospital or medical facility.', 'delivery', true],
  ['INDEL', 'Inside Delivery', 'Freight is moved beyond the dock or threshold into the building.', 'delivery', true],
  ['INPU', 'Inside Pickup', 'Freight is collected from inside the building rather than the dock.', 'pickup', true],
  ['LGDEL', 'Liftgate Delivery', 'A liftgate is required to lower freight to the ground at delivery.', 'delivery', true],
  ['LGPU', 'Liftgate Pickup', 'A liftgate is required to raise freight from the ground at pickup.', 'pickup', true],
  ['LTDDEL', 'Limited Access Delivery', 'Delivery to a location with limited access (storage unit, school, church, mine).', 'delivery', true],
  ['LTDPU', 'Limited Access Pickup', 'Pickup from a location with limited access (storage unit, school, church, mine).', 'pickup', true],
  ['MILDEL', 'Military Base Delivery', 'Delivery to a military installation.', 'delivery', true],
  ['NOTIFY', 'Notify Before Delivery', 'Carrier must call the consignee before delivery.', 'delivery', true],
  ['PFZ', 'Protect From Freezing', 'Freight must be kept above freezing in transit.', 'both', true],
  ['RESDEL', 'Residential Delivery', 'Delivery to a residence or a business operated from a home.', 'delivery', true],
  ['RESPU', 'Residential Pickup', 'Pickup from a residence or a business operated from a home.', 'pickup', true],
  ['SATDEL', 'Saturday Delivery', 'Delivery on a Saturday.', 'delivery', true],
  ['SATPU', 'Saturday Pickup', 'Pickup on a Saturday.', 'pickup', true],
  ['SCHDEL', 'School Delivery', 'Delivery to a school, college or university.', 'delivery', true],
  ['SORTSEG', 'Sort and Segregate', 'Freight must be sorted and segregated by the carrier at delivery.', 'delivery', true],
  ['SSTORDEL', 'Self Storage Delivery', 'Delivery to a self storage facility.', 'delivery', true],
  ['TRADEPU', 'Trade Show Pickup', 'Pickup at the close of a trade show, on the show schedule.', 'pickup', true],
  ['TWOMAN', 'Two Person Delivery', 'A second person is required to handle the freight at delivery.', 'delivery', true],
  ['WHITEGLV', 'White Glove Service', 'Inside delivery with unpacking, placement and debris removal.', 'delivery', true],
  ['AIRPDEL', 'Airport Delivery', 'Delivery to an airport or airline cargo facility.', 'delivery', true],
  ['AIRPPU', 'Airport Pickup', 'Pickup from an airport or airline cargo facility.', 'pickup', true],
  ['PIERDEL', 'Pier Delivery', 'Delivery to a pier, wharf or port terminal.', 'delivery', true],
  ['PIERPU', 'Pier Pickup', 'Pickup from a pier, wharf or port terminal.', 'pickup', true],
  ['BLIND', 'Blind Shipment', 'Shipper and consignee are not disclosed to each other on the bill of lading.', 'both', false],
  ['OVDIM', 'Over Dimension', 'Freight exceeds standard dimensions (length over 12 feet).', 'both', true],
  ['SEAL', 'Seal Verification', 'Trailer seal number must be verified and recorded at delivery.', 'delivery', false],
  ['DRIVERASST', 'Driver Assist', 'Driver assists with loading or unloading.', 'both', true],
  ['CUSTPU', 'Customs Clearance Pickup', 'Pickup of freight held at a bonded facility after customs clearance.', 'pickup', false],
  ['TEMPCTRL', 'Temperature Controlled', 'Freight must be kept within a set temperature range.', 'both', true],
  ['DOCKDEL', 'Dock Delivery', 'Delivery at the consignee dock, no inside delivery.', 'delivery', false],
];

export function accessorials(): Entry[] {
  return rows.map(([code, description, long_description, stop_type, is_charge_code], i) => ({
    id: 101 + i,
    code,
    description,
    long_description,
    is_charge_code,
    stop_type,
  }));
}
